"""Soak: one long trial per frame size at a fixed rate, its loss and latency read every
``interval_s`` while the traffic runs (ONP's hour at the NDR; latency outliers show as
the worst intervals). The rate is absolute, a share of line rate, or a share of the
NDR an earlier task found."""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy, SoakInterval
from nsb.frames import Frame
from nsb.intervals import IntervalSample, interval_record
from nsb.traffic_profiles import common, soak_run, stored_ndr
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint, loss_judge
from nsb.trial import Trial

RATE_KEYS = ("rate_pps", "rate_pct", "ndr_task")


class SoakProfile(TrafficProfile):
    """A long trial at one rate, sampled per interval (SoakInterval events)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": {**common.PACKET_SIZES, "default": [64],
                             "description": "frame sizes in bytes, one soak each; IMIX sends "
                                            "the imix mix"},
            "imix": common.IMIX,
            "duration": {**common.DURATION, "default": 3600,
                         "description": "seconds of traffic per frame size"},
            "interval_s": {"description": "seconds per interval: counts and latency are "
                                          "read this often while the traffic runs",
                           "type": "number", "minimum": 0.5, "default": 10},
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "rate_pps": {"description": "the rate offered, frames per second (all ports)",
                         "type": "number", "exclusiveMinimum": 0},
            "rate_pct": {"description": "the rate offered, in % of line rate",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 100},
            "ndr_task": {"description": "an earlier task (id, unique id prefix, or results "
                                        "directory): the rate is ndr_pct % of the NDR it "
                                        "found for the frame size",
                         "type": "string", "minLength": 1},
            "ndr_scenario": {"description": "the scenario of ndr_task whose NDR to take "
                                            "(default: the first with one)",
                             "type": "string", "minLength": 1},
            "ndr_pct": {"description": "the share of ndr_task's NDR offered, in %",
                        "type": "number", "exclusiveMinimum": 0, "maximum": 100,
                        "default": 100},
            "worst_intervals": {"description": "how many of the worst intervals (most loss, "
                                               "then highest latency) the result lists",
                                "type": "integer", "minimum": 1, "default": 5},
            "latency": {"description": "false: no latency stream (throughput only)",
                        "type": "boolean", "default": True},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
        "oneOf": [{"required": [key]} for key in RATE_KEYS],
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["interval_s"] > options["duration"]:
            raise spec.options_where.error(
                f"interval_s {options['interval_s']:g} is longer than the duration "
                f"{options['duration']:g} s", "interval_s")
        self.ndr: dict[Frame, float] = {}
        if "ndr_task" in options:
            self.ndr = stored_ndr.ndr_rates(spec.options_where, options["ndr_task"],
                                            run.results_dir.parent,
                                            options.get("ndr_scenario"), self.frame_sizes)

    def rate(self, frame: Frame, ports: int) -> tuple[float, float]:
        """(pps, % of line rate) the soak offers for ``frame``."""
        o, speed = self.options, self.speed_gbps
        if "rate_pct" in o:
            return units.pct_to_pps(o["rate_pct"], frame, speed, ports), float(o["rate_pct"])
        pps = float(o["rate_pps"]) if "rate_pps" in o else self.ndr[frame] * o["ndr_pct"] / 100
        return pps, units.pps_to_pct(pps, frame, speed, ports)

    def describe(self) -> dict:
        info = super().describe()
        if self.ndr:
            info["stored_ndr_pps"] = {str(f): pps for f, pps in self.ndr.items()}
        return info

    def execute(self, measurer: Measurer) -> None:
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            self._soak(measurer, frame)

    def _soak(self, measurer: Measurer, frame: Frame) -> None:
        o = self.options
        pps, pct = self.rate(frame, measurer.ports)
        trial = Trial(frame_size=frame, rate_pps=pps, duration_s=float(o["duration"]),
                      flows=o.get("flows"), latency=o["latency"])
        index, intervals = measurer.trial_count, []

        def on_interval(sample: IntervalSample) -> None:
            intervals.append(sample)
            measurer.emit(SoakInterval(measurer.task_id, measurer.scenario, trial_index=index,
                                       frame_size=frame, rate_pps=pps, sample=sample))

        send = soak_run.sender(measurer.generator, float(o["interval_s"]), on_interval,
                               measurer.should_stop)
        done = measurer.measure(trial, SearchPoint(pct, pct, pct, 1, trial.duration_s),
                                loss_judge(o["tolerated_loss_pct"]), why="soak", run=send)
        measurer.result_ready(
            frame, done.result if done.verdict == PASS else None, self.speed_gbps,
            LIMITED_BY.get(done.verdict, LimitedBy.NONE), 1, self.spec.type,
            extra={"offered_pps": pps, "measured_loss_pct": done.result.loss_pct,
                   "soak": summary(intervals, o["worst_intervals"])})


def summary(intervals: list[IntervalSample], worst: int) -> dict:
    """How the intervals went: how many lost frames, and the worst ones (most loss,
    then highest maximum latency)."""
    def badness(sample: IntervalSample) -> tuple:
        return (sample.loss_pct, sample.latency.max_us if sample.latency else 0.0)

    ranked = sorted(intervals, key=badness, reverse=True)[:worst]
    return {
        "intervals": len(intervals),
        "lossy_intervals": sum(s.lost_packets > 0 for s in intervals),
        "worst": [interval_record(s) for s in ranked],
    }
