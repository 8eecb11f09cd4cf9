"""Events as plain JSON-able records; the KPI keys are the stable column names."""

from __future__ import annotations

from dataclasses import asdict

from nsb import loss_budget, units
from nsb.events import (
    Event,
    KpiSample,
    PlatformFacts,
    PlrEstimate,
    ResultReady,
    SoakInterval,
    TaskFinished,
    TaskStarted,
    TrialDone,
    TrialStarted,
)
from nsb.frames import Frame, FrameMix
from nsb.intervals import interval_record
from nsb.trial import latency_record


def frame_fields(frame: Frame) -> dict:
    """``frame_size`` as results hold it; a mix adds its sizes and weights."""
    if isinstance(frame, FrameMix):
        return {"frame_size": frame.label, "frame_mix": frame.describe()}
    return {"frame_size": frame}


def trial_record(event: TrialDone) -> dict:
    result = event.result
    trial = result.trial
    return {
        "scenario": event.scenario, "iteration": event.iteration,
        "trial_index": event.trial_index, "timestamp": event.timestamp,
        **frame_fields(trial.frame_size), "duration_s": trial.duration_s, "flows": trial.flows,
        "requested_rate_pps": trial.rate_pps, "requested_rate_pct": event.rate_pct,
        "tx_rate_pps": result.tx_rate_pps, "rx_rate_pps": result.rx_rate_pps,
        "tx_mbps": units.pps_to_mbps(result.tx_rate_pps, trial.frame_size),
        "tx_packets": result.tx_packets, "rx_packets": result.rx_packets,
        "lost_packets": result.lost_packets, "loss_pct": result.loss_pct,
        "elapsed_s": result.elapsed_s, "generator_limited": result.generator_limited,
        "verdict": event.verdict, "reason": event.reason,
        "search_lower_pct": event.lower_pct, "search_upper_pct": event.upper_pct,
        "intended_packets": result.intended_packets,
        "latency": latency_record(result.latency), "ports": result.ports,
        "extra": result.extra, "path": loss_budget.record(event.path),
        **({"chains": [c.record(result) for c in result.chains]}
           if result.chains else {}),
        **({"sessions": _sessions(trial, result)} if result.sessions is not None else {}),
        **({"addresses": {**asdict(trial.addresses), **result.addresses.record(),
                          "unknown_addresses": result.addresses.unknown_addresses}}
           if result.addresses is not None and trial.addresses is not None else {}),
    }


def _sessions(trial, result) -> dict:
    """A stateful trial's load and connections, as results hold them."""
    load = trial.sessions
    return {"program": load.program, "cps_asked": load.cps,
            "request_bytes": load.request_bytes, "response_bytes": load.response_bytes,
            "hold_s": load.hold_s, "fresh": load.fresh,
            **({"data_pps_per_session": load.data_pps_per_session, "data_s": load.data_s}
               if load.data_pps_per_session else {}),
            **result.sessions.record()}


def result_record(event: ResultReady) -> dict:
    return {
        "scenario": event.scenario, "iteration": event.iteration, "timestamp": event.timestamp,
        **frame_fields(event.frame_size), "throughput_pps": event.throughput_pps,
        "throughput_mbps": event.throughput_mbps, "line_rate_pct": event.line_rate_pct,
        "loss_pct": event.loss_pct, "latency": latency_record(event.latency),
        "limited_by": event.limited_by, "limited_reason": event.limited_reason,
        "trials": event.trials, "profile": event.profile,
        "tx_packets": event.tx_packets, "rx_packets": event.rx_packets,
        "warnings": list(event.warnings), **event.extra,
    }


def soak_record(event: SoakInterval) -> dict:
    """One interval of a soak: its trial, frame size, offered rate and counts."""
    return {"scenario": event.scenario, "trial_index": event.trial_index,
            "timestamp": event.timestamp, **frame_fields(event.frame_size),
            "rate_pps": event.rate_pps, **interval_record(event.sample)}


def plr_record(event: PlrEstimate) -> dict:
    """PLRsearch after one trial: the trial, the estimate and its spread per fit."""
    return {"scenario": event.scenario, "trial_index": event.trial_index,
            "timestamp": event.timestamp, **frame_fields(event.frame_size),
            "target_loss_ratio": event.target_loss_ratio, "load_pps": event.load_pps,
            "duration_s": event.duration_s, "lost_packets": event.lost_packets,
            "estimate_pps": event.estimate_pps, "stdev_pps": event.stdev_pps,
            "fits": {name: {"estimate_pps": mean, "stdev_pps": stdev}
                     for name, (mean, stdev) in event.fits.items()}}


def record(event: Event) -> dict:
    """Any event as ``{"event": name, ...fields}``."""
    if isinstance(event, TrialDone):
        body = trial_record(event)
    elif isinstance(event, ResultReady):
        body = result_record(event)
    elif isinstance(event, TrialStarted):
        body = {"scenario": event.scenario, "trial_index": event.trial_index,
                **frame_fields(event.trial.frame_size), "rate_pps": event.trial.rate_pps,
                "rate_pct": event.rate_pct, "timestamp": event.timestamp}
    elif isinstance(event, SoakInterval):
        body = soak_record(event)
    elif isinstance(event, PlrEstimate):
        body = plr_record(event)
    elif isinstance(event, (KpiSample, PlatformFacts, TaskStarted, TaskFinished)):
        body = asdict(event)
    else:
        body = asdict(event)
    return {"event": type(event).__name__, "task_id": event.task_id, **body}
