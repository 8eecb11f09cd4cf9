"""NSB's IxLoad HTTP tasks (``tc_baremetal_http_ixload_*``, ``*_http_*_ixload*``): IxLoad
is a commercial generator nsb does not drive, so such a task ends in one located line
naming the sample that measures the same with TRex ASTF, with the IxLoad task's
concurrency and object size as its task arguments.

An IxLoad scenario is known by its ``ixia_profile`` (an IxLoad repository, ``.rxf``)
or its type (``NSPerf-RFC3511``); what it measured is read from the profile's and the
task's names (concurrency, connections, transactions, throughput) and its options
(``simulated_users``, ``page_object``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nsb.task.nsd import not_supported
from nsb.task.yaml_lines import LocatedDocument

SAMPLES = "samples/stateful"
_SIZE = re.compile(r"(\d+)\s*([kmg]?)b?", re.IGNORECASE)
_UNIT = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
_USERS = re.compile(r"(\d+)_concurrency")
_OBJECT = re.compile(r"ixload_(\d+[kmg]?b?)_requests")


def check(doc: LocatedDocument) -> None:
    """One located line at the first IxLoad scenario of ``doc``."""
    scenarios = doc.data.get("scenarios") if isinstance(doc.data, dict) else None
    for index, raw in enumerate(scenarios if isinstance(scenarios, list) else []):
        if not isinstance(raw, dict):
            continue
        rxf = str(raw.get("ixia_profile") or "")
        if rxf.lower().endswith(".rxf"):
            at: tuple = ("scenarios", index, "ixia_profile")
        elif raw.get("type") == "NSPerf-RFC3511":
            at = ("scenarios", index, "type")
        else:
            continue
        sample, args = equivalent(f"{Path(doc.file).name} {rxf}".lower(), raw.get("options"))
        shown = f" --task-args '{json.dumps(args)}'" if args else ""
        raise not_supported(doc, at, (
            f"IxLoad ({rxf.rsplit('/', 1)[-1] or 'NSPerf-RFC3511'}), a commercial generator "
            f"nsb does not drive; TRex ASTF measures the same: nsb task start "
            f"{SAMPLES}/{sample}{shown}"))


def equivalent(names: str, options) -> tuple[str, dict]:
    """The sample measuring what an IxLoad task named ``names`` does, and its task
    arguments from the task's options (users: sessions, page object: response size)."""
    options = options if isinstance(options, dict) else {}
    users = _first(options.get("simulated_users"))
    if users is None:  # tc_..._Requests-65000_Concurrency: its users in its name
        named = _USERS.search(names)
        users = named.group(1) if named else None
    size = _bytes(_first(options.get("page_object")))
    if size is None:  # tc_baremetal_http_ixload_4k_Requests...: its object in its name
        named = _OBJECT.search(names)
        size = _bytes(named.group(1)) if named else None
    if "throughput" in names:
        return "tc_astf_throughput_nftables.yaml", {"frame_size": 1518}
    if "concurren" in names or "simulated_users" in names:
        args = {"upper_sessions": int(users)} if str(users).isdigit() else {}
        return "tc_astf_sessions_nftables.yaml", args
    args: dict = {"program": "http"}
    if size is not None:
        args["response_bytes"] = size
    return "tc_astf_cps_nftables_nat.yaml", args


def _first(value):
    """IxLoad's per-link option (``{uplink: [65000]}``): its first value."""
    if isinstance(value, dict):
        value = next(iter(value.values()), None)
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def _bytes(page) -> int | None:
    """``/1b.html``, ``/4k.html``, ``/1024K.bin``: the object's size in bytes."""
    if not isinstance(page, str):
        return None
    found = _SIZE.search(page.rsplit("/", 1)[-1])
    return int(found.group(1)) * _UNIT[found.group(2).lower()] if found else None
