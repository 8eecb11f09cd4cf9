"""Reset time (RFC 6201): a steady rate, an event on the DUT while it runs (a pause of
known length), and how long the outage was: by frame loss (lost / rate), by timestamps
(last frame forwarded before, first after) and until every frame arrives again. N trials
give the mean and spread; one that does not come back within ``recovery_limit_s`` fails
("not recovered"). The trial is read every ``interval_s`` (its timeline is the trial's
intervals, kept like a soak's)."""

from __future__ import annotations

from nsb import vnf_events
from nsb.events import LimitedBy, SoakInterval
from nsb.frames import Frame
from nsb.intervals import IntervalSample
from nsb.traffic_profiles import common, soak_run
from nsb.traffic_profiles.judges import FAIL, GENERATOR_LIMITED, PASS
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.reset_timeline import (
    ResetTime,
    analyse,
    dut_view,
    record,
    spread,
)
from nsb.traffic_profiles.soak import RATE_KEYS, SoakProfile
from nsb.trial import Trial, TrialResult

PROPERTIES = {**SoakProfile.OPTIONS_SCHEMA["properties"]}
for _key in ("worst_intervals", "imix"):
    PROPERTIES.pop(_key)


class ResetTimeProfile(SoakProfile):
    """Trials at a steady rate with an event on the DUT; the outage it caused."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **PROPERTIES,
            "packet_sizes": {**common.PACKET_SIZES, "default": [64],
                             "description": "frame sizes in bytes, N trials each"},
            "duration": {**common.DURATION, "default": 8,
                         "description": "seconds of traffic per trial"},
            "interval_s": {"description": "seconds per reading of the trial's counters: the "
                                          "timeline's resolution",
                           "type": "number", "minimum": 0.02, "maximum": 1, "default": 0.1},
            "ndr_pct": {"description": "the share of ndr_task's NDR offered, in % (at most "
                                       "100: above the NDR frames are lost without any "
                                       "event)",
                        "type": "number", "exclusiveMinimum": 0, "maximum": 100,
                        "default": 50},
            "event": {**vnf_events.SCHEMA, "default": {"type": "pause"}},
            "tolerated_loss_pct": {
                "description": "frames lost before the event tolerated, in % of those sent "
                               "then (lost: still missing at every later reading)",
                "type": "number", "minimum": 0, "maximum": 100, "default": 0.1},
            "latency": {"description": "true: latency per reading too (TRex's latency "
                                       "streams; their readings make each one slower, "
                                       "about 0.13 s instead of 0.05 s here)",
                        "type": "boolean", "default": False},
            "event_at_s": {"description": "seconds into each trial when the event starts "
                                          "(the traffic before it must be loss-free)",
                           "type": "number", "exclusiveMinimum": 0, "default": 2},
            "warmup_s": {"description": "seconds at the start of each trial whose loss "
                                        "is neither the event's nor held against the rate "
                                        "(a switch learning its flows)",
                         "type": "number", "minimum": 0, "default": 0.5},
            "trials": {"description": "trials per frame size (mean and spread)",
                       "type": "integer", "minimum": 1, "default": 1},
            "recovery_limit_s": {"description": "a trial whose frames do not all arrive "
                                                "again within this many seconds of the "
                                                "event fails (not recovered)",
                                 "type": "number", "exclusiveMinimum": 0, "default": 3},
        },
        "oneOf": [{"required": [key]} for key in RATE_KEYS],
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["warmup_s"] >= options["event_at_s"]:
            raise spec.options_where.error(
                f"warmup_s {options['warmup_s']:g} does not end before the event at "
                f"{options['event_at_s']:g} s", "warmup_s")
        if options["event_at_s"] >= options["duration"]:
            raise spec.options_where.error(
                f"event_at_s {options['event_at_s']:g} is not within the trial's duration "
                f"{options['duration']:g} s", "event_at_s")

    ANSWER_KEY = "reset"  # the result's key of the answer (nsb.report.reset_table)
    WHAT = "reset time"  # a trial's reason starts with it

    def _soak(self, measurer: Measurer, frame: Frame) -> None:
        o = self.options
        pps, pct = self.rate(frame, measurer.ports)
        found: list = []
        verdicts = []
        views: dict[int, dict] = {}  # by trial index: what the DUTs' own counters saw
        for number in range(1, o["trials"] + 1):
            if measurer.should_stop():
                break
            done, seen, view = self._timed_trial(measurer, frame, pps, pct, number)
            verdicts.append(done)
            found += seen
            views.update(view)
        if not verdicts:
            return
        passed = all(d.verdict == PASS for d in verdicts) and len(verdicts) == o["trials"]
        limited = LimitedBy.NONE if passed else LimitedBy.GENERATOR if any(
            d.verdict == GENERATOR_LIMITED for d in verdicts) else LimitedBy.DUT
        answer = with_dut_views(self.answer(found, pps), views,
                                (self.options.get("event") or {}).get("vnf"))
        measurer.result_ready(
            frame, verdicts[-1].result if passed else None, self.speed_gbps, limited,
            len(verdicts), self.spec.type,
            extra={"offered_pps": pps, self.ANSWER_KEY: answer})

    def answer(self, found: list, pps: float) -> dict:
        """The frame size's answer from its trials' outages ((trial index, outage))."""
        return summary(found, self.options["event"])

    def event(self, measurer: Measurer):
        """(the event's act, the event as results hold it, seconds into the trial)."""
        event = self.options["event"]
        measurer.hooks.prepare(event)  # before the traffic: a rule churn's rules
        return (lambda: measurer.hooks.perform(event), event,
                float(event.get("at_s", self.options["event_at_s"])))

    def judged(self, result: TrialResult, intervals: list[IntervalSample], happened):
        """The trial's verdict, its reason and what it found (a list of one, or none)."""
        return _judged(result, intervals, happened, self.options)

    def _timed_trial(self, measurer: Measurer, frame: Frame, pps: float, pct: float,
                     number: int):
        """One trial read per interval with the event at its time: (its Measurement,
        what ``judged`` found in it, each with the trial's index, and what the DUTs' own
        counters saw, by the trial's index)."""
        o = self.options
        trial = Trial(frame_size=frame, rate_pps=pps, duration_s=float(o["duration"]),
                      flows=o.get("flows"), latency=o["latency"])
        index, intervals = measurer.trial_count, []

        def on_interval(sample: IntervalSample) -> None:
            intervals.append(sample)
            measurer.emit(SoakInterval(measurer.task_id, measurer.scenario, trial_index=index,
                                       frame_size=frame, rate_pps=pps, sample=sample))

        act, event, at_s = self.event(measurer)
        scheduled = vnf_events.Scheduled(act, event, at_s,
                                         lambda: measurer.generator.traffic_started)
        send = soak_run.sender(measurer.generator, float(o["interval_s"]), on_interval,
                               measurer.should_stop)
        watch = measurer.hooks.watch_duts(float(o["interval_s"]))
        found: list = []
        views: dict[int, dict] = {}

        def run(t: Trial) -> TrialResult:
            with watch, scheduled:
                return send(t)

        def judge(result: TrialResult):
            happened = scheduled.happened
            verdict, reason, seen = self.judged(result, intervals, happened)
            found.extend((index, item) for item in seen)
            if happened is not None:
                views[index] = {
                    name: dut_view(timeline, happened.start_s, trial.duration_s,
                                   o["warmup_s"])
                    for name, timeline in watch.timelines(
                        measurer.generator.traffic_started).items()}
            return verdict, reason

        done = measurer.measure(trial, SearchPoint(pct, pct, pct, o["trials"] - number,
                                                   trial.duration_s),
                                judge, why=f"{self.WHAT}, trial {number} of {o['trials']}",
                                run=run)
        return done, found, views


def not_happened(happened, noun: str) -> tuple | None:
    """(FAIL, why, []) when the trial's event did not happen or failed, else None."""
    if happened is None:
        return FAIL, f"the {noun} did not happen (the traffic ended first)", []
    if happened.error:
        return FAIL, f"the {noun} failed: {happened.error}", []
    return None


def not_steady(result: TrialResult, lost_before: int, sent_before: int, o: dict,
               noun: str) -> tuple | None:
    """(verdict, why, []) when no outage of the DUT's is known from the trial: frames
    were lost before the event (the rate is not loss-free), or the generator did not
    keep the rate; else None."""
    if lost_before > sent_before * o["tolerated_loss_pct"] / 100:
        return FAIL, (f"{lost_before:,} of {sent_before:,} frames lost before the {noun} "
                      f"(tolerated: {o['tolerated_loss_pct']:g} %): the rate is not "
                      "loss-free, lower it"), []
    if result.generator_limited:
        return GENERATOR_LIMITED, (f"the generator could not keep the rate "
                                   f"({result.generator_note})"), []
    return None


def _judged(result: TrialResult, intervals: list[IntervalSample], happened,
            o: dict) -> tuple:
    """The trial's verdict, its reason and its outage (a list of one, or none)."""
    if failed := not_happened(happened, "event"):
        return failed
    outage = analyse(intervals, happened.start_s, happened.end_s, result.trial.rate_pps,
                     o["warmup_s"])
    if unknown := not_steady(result, outage.lost_before, outage.sent_before, o, "event"):
        return unknown
    lasted = happened.end_s - happened.start_s
    if happened.end_s >= result.trial.duration_s:
        return FAIL, (f"the event lasted {lasted:.3f} s, past the trial's end at "
                      f"{result.trial.duration_s:g} s: no recovery can be seen; make "
                      "duration longer than event_at_s, the event and recovery_limit_s"), []
    if not _within(outage, o["recovery_limit_s"]):
        longer = f" (the event itself lasted {lasted:.3f} s: raise recovery_limit_s)" \
            if lasted >= o["recovery_limit_s"] else ""
        return FAIL, (f"not recovered: frames were still lost "
                      f"{o['recovery_limit_s']:g} s after the event{longer}"), [outage]
    shown = f"{outage.timestamp_s:.3f}" if outage.timestamp_s is not None else "-"
    return PASS, (f"reset time {outage.frame_loss_s:.3f} s by frame loss, {shown} s by "
                  f"timestamps; every frame arrived again {outage.full_rate_back_s:.3f} s "
                  "after the event"), [outage]


def with_dut_views(answer: dict, views: dict[int, dict], vnf: str | None) -> dict:
    """``answer`` with what the DUTs' own counters saw in each of its trials, and the
    spread of the event's VNF's own silence (``dut_silent_s``) when it was read."""
    silences = []
    for trial in answer.get("trials", []):
        trial["duts"] = views.get(trial["trial_index"], {})
        seen = trial["duts"].get(vnf or "", {}).get("silent_s")
        if seen is not None:
            silences.append(seen)
    if silences:
        answer["dut_silent_s"] = spread(silences)
    return answer


def _within(outage: ResetTime, limit_s: float) -> bool:
    return outage.full_rate_back_s is not None and outage.full_rate_back_s <= limit_s


def summary(found: list[tuple[int, ResetTime]], event: dict) -> dict:
    """The answer: each trial's outage (with its index), and the mean and spread of each
    method."""
    outages = [x for _, x in found]

    def values(key: str) -> list[float]:
        return [getattr(x, key) for x in outages if getattr(x, key) is not None]

    frame_loss = spread(values("frame_loss_s"))
    return {
        "event": dict(event),
        "trials": [{"trial_index": index, **record(x)} for index, x in found],
        "frame_loss_s": frame_loss,
        "timestamp_s": spread(values("timestamp_s")),
        "full_rate_back_s": spread(values("full_rate_back_s")),
        "recovered": bool(outages) and all(x.recovered for x in outages),
        # the mean outage by frame loss: RFC 6201's reset time, CSIT's effective blocked
        # time of a reconfiguration
        "reset_time_s": frame_loss.get("mean"),
        "blocked_time_s": frame_loss.get("mean"),
        "loss_ratio": spread(values("loss_ratio")),
    }


class ReconfigProfile(ResetTimeProfile):
    """Rules changed under load: reset_time's trials, a rule churn for the event.

    CSIT's reconfiguration tests, VSPerf's flow addition under load: the answer's
    blocked_time_s is the frames lost over the rate offered (CSIT's effective blocked
    time) and loss_ratio the share of the trial's frames lost."""

    OPTIONS_SCHEMA = {
        **ResetTimeProfile.OPTIONS_SCHEMA,
        "properties": {
            **ResetTimeProfile.OPTIONS_SCHEMA["properties"],
            "event": {**vnf_events.SCHEMA, "default": {"type": "rule_churn"}},
        },
    }
