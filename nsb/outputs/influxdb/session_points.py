"""Stateful trials and answers in InfluxDB: a trial's connections as a point of their
own (``nsb_trial_sessions``: counts, failed by reason, rates, the DUT's own count),
and an answer's connections as fields of its ``nsb_result`` point (its kind, the
connection rate, the sessions held, the DUT's count, the generator's ceiling), so
Grafana draws CPS and sessions without reading frames."""

from __future__ import annotations

from nsb import stateful_kpis
from nsb.events import TrialDone
from nsb.outputs.influxdb import names as n

# an answer's counts (of the trial that backs it) carried on its nsb_result point
_ANSWER_COUNTS = (n.FAILED_TOTAL, n.NEVER_ATTEMPTED, n.RETRANSMITTED)


def trial_parts(event: TrialDone) -> tuple[dict, dict] | None:
    """(tags, fields) of a stateful trial's nsb_trial_sessions point; None for a trial
    of frames."""
    result = event.result
    if result.sessions is None:
        return None
    load = result.trial.sessions
    record = result.sessions.record()
    if load is not None:
        record.update(cps_asked=load.cps, request_bytes=load.request_bytes,
                      response_bytes=load.response_bytes, hold_s=load.hold_s)
    tags = {n.FRAME_SIZE: result.trial.frame_size, n.VERDICT: event.verdict,
            n.PROGRAM: load.program if load is not None else None}
    fields = {**stateful_kpis.trial_fields(record), "iteration": event.iteration,
              "trial_index": event.trial_index}
    return tags, fields


def result_fields(extra: dict) -> tuple[dict, str]:
    """The numeric fields a stateful answer adds to its nsb_result point, and its kind
    (a string field; '' for a frame answer)."""
    stateful = extra.get("stateful")
    if not isinstance(stateful, dict):
        return {}, ""
    fields = dict(stateful_kpis.result_numbers(stateful))
    counts = stateful.get("counts")
    if isinstance(counts, dict):
        made = stateful_kpis.trial_fields(counts)
        fields.update({key: made.get(key) for key in _ANSWER_COUNTS})
    return fields, str(stateful.get("kind") or "")
