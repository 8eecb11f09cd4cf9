"""Stateful throughput: the highest packet rate of data that S open sessions carry
through the DUT without loss, with the DUT holding all S by its own count.

A trial opens ``sessions`` at ``open_cps`` (each a datagram each way, the DUT's state
made: its conntrack entry, its NAT binding), waits until all are open, then every
session sends its share of the trial's rate as datagrams of ``frame_size`` for
``duration`` seconds (program udp_stream: a datagram lost is counted, where TCP would
send it again). It passes when every session came up, the DUT's own count reached
``dut_keeps_pct`` of them while they were open, and no more than
``tolerated_loss_pct`` of the data was lost by the server side's count. The search is
over the rate of data, as RFC 2544's over frames; an answer's throughput is that
data's rate (FD.io CSIT's NAT44 TPUT with sessions made first)."""

from __future__ import annotations

from dataclasses import dataclass

from nsb.events import Verdict
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.stateful import answer, common, search
from nsb.trial import Trial, TrialResult

UDP_OVERHEAD = 46  # Ethernet 14 + FCS 4 + IPv4 20 + UDP 8: a frame's bytes around its payload


@dataclass(frozen=True)
class StreamJudge:
    """Sessions first (all up, all held by the DUT), then the data's loss."""

    tolerated_loss_pct: float = 0.0
    dut_keeps_pct: float = 100.0

    def __call__(self, result: TrialResult) -> tuple[Verdict, str]:
        c = result.sessions
        down = c.attempted - c.established
        if down > 0:
            return Verdict.FAIL, f"{down:,} of {c.intended:,} sessions did not come up"
        wanted = c.established * self.dut_keeps_pct / 100.0
        if c.dut_sessions is not None and c.dut_sessions < wanted:
            return Verdict.FAIL, (f"the DUT held at most {c.dut_sessions:,} sessions by its own "
                                  f"count, of the {c.established:,} open")
        data = c.data
        if data and c.data_loss_pct > self.tolerated_loss_pct:
            return Verdict.FAIL, (f"{c.data_lost:,} of {data['sent']:,} datagrams of data lost "
                                  f"({c.data_loss_pct:.4g}% > tolerated "
                                  f"{self.tolerated_loss_pct:g}%)")
        if c.never_attempted or result.generator_limited:
            return Verdict.GENERATOR_LIMITED, result.generator_note or (
                f"the generator opened {c.attempted:,} of the {c.intended:,} sessions")
        return Verdict.PASS, (f"{c.established:,} sessions held, {data.get('received', 0):,} of "
                              f"{data.get('sent', 0):,} datagrams of data through "
                              f"(loss {c.data_loss_pct:.4g}%)")


class StatefulThroughputProfile(TrafficProfile):
    """Stateful throughput: the data rate open sessions carry without loss, all held by the DUT."""

    BASE_OPTIONS = ("interface_speed_gbps",)
    NEEDS_SESSIONS = True
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "sessions": {"description": "sessions opened before the data (and held by the "
                                        "DUT while it flows)",
                         "type": "integer", "minimum": 1, "default": 1000},
            "open_cps": {"description": "the rate sessions are opened at (below the DUT's "
                                        "connection rate: this test is of the data)",
                         "type": "number", "exclusiveMinimum": 0, "default": 2000},
            "frame_size": {"description": "bytes of each data frame on the wire (its UDP "
                                          "payload is 46 fewer)",
                           "type": "integer", "minimum": 64, "maximum": 9216, "default": 64},
            "lower_pps": {"description": "the lowest data rate tried, packets/s of all "
                                         "sessions together",
                          "type": "number", "exclusiveMinimum": 0, "default": 1000},
            "upper_pps": {"description": "the highest data rate tried (first)",
                          "type": "number", "exclusiveMinimum": 0, "default": 100000},
            "precision_pct": common.PRECISION,
            "search": common.SEARCH,
            "duration": {"description": "seconds each session sends data for, once all are "
                                        "open",
                         "type": "number", "exclusiveMinimum": 0, "default": 2.0},
            "tolerated_loss_pct": {"description": "data a trial may lose and pass, in % of "
                                                  "the datagrams sent (sessions: none)",
                                   "type": "number", "minimum": 0, "maximum": 100,
                                   "default": 0.0},
            "dut_keeps_pct": common.OPTIONS_DUT_KEEPS,
            "reset_state": common.OPTIONS["reset_state"],
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["lower_pps"] >= options["upper_pps"]:
            raise spec.options_where.error(f"lower_pps {options['lower_pps']:g} must be below "
                                           f"upper_pps {options['upper_pps']:g}", "lower_pps")
        self.options = {**options, "program": "udp_stream", "tunables": [],
                        "request_bytes": options["frame_size"] - UDP_OVERHEAD,
                        "response_bytes": options["frame_size"] - UDP_OVERHEAD}

    @property
    def judge(self) -> StreamJudge:
        return StreamJudge(self.options["tolerated_loss_pct"], self.options["dut_keeps_pct"])

    def measure(self, measurer: Measurer, pps: float, lower: float, upper: float,
                seconds: float):
        o = self.options
        opening_s = o["sessions"] / o["open_cps"]
        load = common.session_load(self, o["open_cps"], hold_s=opening_s,
                                   data_pps_per_session=pps / o["sessions"], data_s=seconds)
        trial = Trial(frame_size=o["frame_size"], rate_pps=pps, duration_s=opening_s,
                      latency=False, sessions=load)
        top = o["upper_pps"]
        return measurer.measure(trial, SearchPoint(100.0 * pps / top, 100.0 * lower / top,
                                                   100.0 * upper / top), self.judge,
                                why=f"{o['sessions']:,} sessions")

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        before = measurer.trial_count

        def one(pps, lower, upper, seconds):
            return self.measure(measurer, pps, lower, upper, seconds)

        found = search.run(one, o, o["lower_pps"], o["upper_pps"], measurer.should_stop,
                           data=True)
        if found is None:
            return
        best = found.best
        c = best.result.sessions if best is not None else None
        data_pps = c.data["sent"] / best.result.trial.sessions.data_seconds if c and c.data else 0.0
        answer.report(measurer, self, "stateful_throughput", best, found.limited_by,
                      measurer.trial_count - before, frame=o["frame_size"],
                      answer_pps=data_pps, loss_pct=c.data_loss_pct if c else 0.0,
                      extra_stateful={"data_pps": data_pps, "sessions": o["sessions"],
                                      "data_loss_pct": c.data_loss_pct if c else 0.0})
