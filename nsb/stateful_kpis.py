"""The KPIs of stateful answers and trials, one name each wherever results go.

A stateful answer (a result record's ``stateful``, ``ResultReady.extra["stateful"]``)
is measured in its own unit: a ``cps`` answer in connections a second (``cps``, the
rate the generator offered in the trial that backs it), a ``concurrent_sessions``
answer in sessions held (``sessions``); a ``stateful_throughput`` answer is the packet
rate of the sessions' data, so its value stays ``throughput_pps``. The summary's CSV
columns, the InfluxDB fields of ``nsb_result``, the SLA metrics, the comparison and
the trend read these names; a trial's connections (its ``sessions`` record) become
the fields of ``nsb_trial_sessions`` (:func:`trial_fields`).
"""

from __future__ import annotations

import math
import re

CPS, SESSIONS, STATEFUL_THROUGHPUT = "cps", "concurrent_sessions", "stateful_throughput"
KINDS = (CPS, SESSIONS, STATEFUL_THROUGHPUT)
# kind -> the key of the answer's value (a summary column, an nsb_result field)
VALUE_KEY = {CPS: "cps", SESSIONS: "sessions", STATEFUL_THROUGHPUT: "throughput_pps"}
UNIT = {"cps": "connections/s", "sessions": "sessions", "throughput_pps": "pps"}
# the numbers of a stateful answer that the summary, CSV and InfluxDB carry
RESULT_KEYS = ("cps", "cps_asked", "established_cps", "sessions", "dut_sessions",
               "generator_ceiling_cps", "data_pps", "data_loss_pct")
KIND_FIELD = "stateful_kind"  # the answer's kind: a summary column, an nsb_result string field
# the counts of a trial's sessions record carried as they are
TRIAL_KEYS = ("cps_asked", "request_bytes", "response_bytes", "hold_s", "intended",
              "attempted", "established", "never_attempted", "retransmitted",
              "active_at_end", "duration_s", "cps", "offered_cps", "loss_pct", "dut_sessions")
_NAME = re.compile(r"[^a-z0-9_]+")


def of(result: dict) -> dict | None:
    """A result record's stateful answer, or None for a frame answer."""
    stateful = result.get("stateful")
    return stateful if isinstance(stateful, dict) else None


def kind(result: dict) -> str:
    """The kind of a result record's stateful answer, '' for a frame answer."""
    stateful = of(result)
    return str(stateful.get("kind") or "") if stateful else ""


def value_key(result: dict) -> str:
    """The name of the number that is a result record's answer: ``throughput_pps`` for
    frames and stateful throughput, ``cps`` or ``sessions`` for the other stateful kinds."""
    return VALUE_KEY.get(kind(result), "throughput_pps")


def value(result: dict) -> float | int | None:
    """The number that is a result record's answer, in its own unit, as the record holds
    it (a damaged file's NaN too: the trend says it is no number); None: not measured."""
    key = value_key(result)
    found = result.get(key) if key == "throughput_pps" else (of(result) or {}).get(key)
    return found if isinstance(found, (int, float)) and not isinstance(found, bool) else None


def result_numbers(stateful: dict | None) -> dict:
    """A stateful answer's numbers under their summary and InfluxDB names (None where
    the answer has none; every key present for a stateful answer, none for frames)."""
    if not isinstance(stateful, dict):
        return {}
    return {key: _finite(stateful.get(key)) for key in RESULT_KEYS}


def trial_fields(sessions: dict) -> dict[str, float | int]:
    """A trial's sessions record (results.json's ``trials[].sessions``) as the fields
    of ``nsb_trial_sessions``: its counts, ``failed_total`` and each reason as
    ``failed_<reason>``, the generator's error counters as ``generator_error_<name>``
    (and ``generator_errors_total``), the bytes per direction as ``bytes_<direction>``."""
    fields = {key: number for key in TRIAL_KEYS
              if (number := _finite(sessions.get(key))) is not None}
    failed = _counts(sessions.get("failed"))
    fields["failed_total"] = sum(failed.values())
    fields.update({f"failed_{name}": count for name, count in failed.items()})
    errors = _counts(sessions.get("generator_errors"))
    fields["generator_errors_total"] = sum(errors.values())
    fields.update({f"generator_error_{name}": count for name, count in errors.items()})
    fields.update({f"bytes_{name}": count
                   for name, count in _counts(sessions.get("bytes")).items()})
    return fields


def _counts(values) -> dict[str, float | int]:
    """Named counts with names fit for a field (lower case, ``_`` for anything else)."""
    if not isinstance(values, dict):
        return {}
    out: dict[str, float | int] = {}
    for name, count in values.items():
        number = _finite(count)
        if number is not None:
            key = _NAME.sub("_", str(name).lower()).strip("_") or "other"
            out[key] = out.get(key, 0) + number
    return out


def _finite(value) -> float | int | None:
    """A number as it is (a count stays an int); None for anything else, NaN, infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None
