"""The results.json format: its name and version, and reading files of older nsb.

Every results.json starts with ``"format": "nsb-results/1"`` and the
``nsb_version`` that wrote it; docs/results.schema.json describes the format.
The number after the slash changes when a key is renamed or changes meaning,
never when one is added: readers ignore keys they do not know.
"""

from __future__ import annotations

from nsb import __version__, kpi_names

NAME = "nsb-results"
VERSION = 1
FORMAT = f"{NAME}/{VERSION}"


def header() -> dict:
    """The keys results.json starts with."""
    return {"format": FORMAT, "nsb_version": __version__}


def unreadable(doc: dict) -> str | None:
    """Why this nsb cannot read ``doc``'s format; None when it can (also a file
    written before results.json named its format)."""
    value = doc.get("format")
    if value is None:
        return None
    name, _, version = str(value).partition("/")
    if name != NAME or not version.isdigit():
        return f"'format' is {value!r}, not {FORMAT!r}"
    if int(version) > VERSION:
        return (f"written by a newer nsb ({value}, nsb {doc.get('nsb_version', '?')}); this "
                f"nsb reads up to {FORMAT}")
    return None


def upgrade(doc: dict) -> dict:
    """A results document of any earlier nsb as this one writes it: latency
    percentiles named ``p99_9_us`` (not ``p99.9_us``); the document is changed in place."""
    for record in [*_dicts(doc.get("results")), *_dicts(doc.get("trials"))]:
        if isinstance(record.get("latency"), dict):
            record["latency"] = kpi_names.latency_record(record["latency"])
        for point in _dicts(list((record.get("latency_at_ndr_pct") or {}).values())
                            if isinstance(record.get("latency_at_ndr_pct"), dict) else []):
            point["latency"] = kpi_names.latency_record(point.get("latency"))
    return doc


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
