"""The types the reports read in a results file, checked before any report reads it.

A results file is also input: copied between machines, edited by hand, made by
scripts. Every part a report, a comparison, ``task show`` or the SLA gate reads is
checked here for its type, so a list where an object belongs or a string for a
number is one located line, not a traceback in a chart. Whatever a check misses
is caught by :func:`guarded` at the command, and is still one line naming the file.
"""

from __future__ import annotations

import functools

from nsb.errors import TaskError

_NUM = {"type": ["number", "null"]}
_TEXT = {"type": ["string", "null"]}
_OBJECT = {"type": ["object", "null"]}
_NUMBERS = {"type": ["object", "null"], "additionalProperties": _NUM}
_BUCKET = {"type": "object", "required": ["le_us"],
           "properties": {"le_us": _NUM, "count": _NUM}}
_LATENCY = {"type": ["object", "null"], "properties": {
    "histogram": {"type": ["array", "null"], "items": _BUCKET}}}
_NIC = {"type": "object"}
_PATH = {"type": ["object", "null"], "properties": {
    "directions": {"type": ["array", "null"], "items": {"type": "object", "properties": {
        "points": {"type": ["array", "null"], "items": {"type": "object"}},
        "losses": {"type": ["array", "null"], "items": {"type": "object"}},
        "blind": {"type": ["array", "null"], "items": {"type": "string"}}}}},
    "worst": _OBJECT}}
# a stateful trial's connections, and a stateful answer (nsb.stateful_kpis)
_SESSIONS = {"type": ["object", "null"], "properties": {
    **{key: _NUM for key in ("intended", "attempted", "established", "never_attempted",
                             "retransmitted", "cps", "offered_cps", "cps_asked", "loss_pct",
                             "dut_sessions", "duration_s")},
    "failed": _NUMBERS, "generator_errors": _NUMBERS, "bytes": _NUMBERS, "program": _TEXT}}
_STATEFUL = {"type": ["object", "null"], "properties": {
    **{key: _NUM for key in ("cps", "cps_asked", "established_cps", "sessions",
                             "dut_sessions", "generator_ceiling_cps")},
    "kind": _TEXT, "program": _TEXT, "counts": _SESSIONS}}
_CPS_AT = {"type": ["object", "null"], "additionalProperties": {
    "type": "object", "properties": {"cps": _NUM, "verdict": _TEXT, "counts": _SESSIONS}}}
_FACTS = {"type": "object", "properties": {
    "nics": {"type": ["object", "null"], "additionalProperties": _NIC},
    "versions": _OBJECT}}

SHAPE = {
    "type": "object",
    "properties": {
        "task": {"type": "object", "properties": {
            "id": _TEXT, "file": _TEXT, "description": _TEXT, "label": _TEXT,
            "args": _OBJECT, "started": _NUM, "finished": _NUM, "duration_s": _NUM,
            "status": _TEXT, "error": _TEXT}},
        "plan": {"type": "object", "properties": {
            "context": _OBJECT,
            "scenarios": {"type": ["array", "null"], "items": {
                "type": "object", "properties": {
                    "name": _TEXT, "traffic_profile": _OBJECT, "vnfs": _OBJECT,
                    "runner": _OBJECT}}}}},
        "platform": {"type": "object", "additionalProperties": _FACTS},
        "trials": {"type": "array", "items": {"type": "object", "properties": {
            "verdict": _TEXT, "reason": _TEXT, "requested_rate_pct": _NUM,
            "requested_rate_pps": _NUM, "iteration": {"type": ["integer", "null"]},
            "latency": _LATENCY, "path": _PATH, "sessions": _SESSIONS}}},
        "results": {"type": "array", "items": {"type": "object", "properties": {
            "latency": _LATENCY, "limited_by": _TEXT, "lossy_hop": _OBJECT,
            "stateful": _STATEFUL, "cps_at_pct": _CPS_AT,
            "chains": {"type": ["array", "null"], "items": {"type": "object", "properties": {
                "chain": {"type": "integer"}, "lossy_hop": _OBJECT}}},
            "warnings": {"type": ["array", "null"], "items": {"type": "string"}}}}},
        "kpis": {"type": "array", "items": {"type": "object", "properties": {
            "source": _TEXT, "node": _TEXT, "kpis": _NUMBERS,
            "trial_index": {"type": ["integer", "null"]}}}},
    },
}


def check(doc: dict, shown: str) -> None:
    """A TaskError (file, key path, what is wrong) for the first part of the wrong type."""
    from nsb.task import schema  # jsonschema: not on the way to `nsb --help`
    from nsb.task.yaml_lines import LocatedDocument

    schema.validate(doc, SHAPE, LocatedDocument(doc, shown))


def guarded(handler):
    """A report command whose results file holds what no check above foresaw ends in
    one line naming the files it read (the traceback stays for --debug)."""
    @functools.wraps(handler)
    def run(args):
        try:
            return handler(args)
        except (TypeError, AttributeError, KeyError, ValueError, IndexError,
                ZeroDivisionError, OverflowError) as exc:
            refs = getattr(args, "task_ids", None) or [getattr(args, "task_id", "?")]
            raise TaskError(f"a value of an unexpected type or form in the results of "
                            f"{', '.join(map(str, refs))} ({type(exc).__name__}: "
                            f"{str(exc)[:200]}); nsb reads results files as it writes "
                            "them") from exc
    return run
