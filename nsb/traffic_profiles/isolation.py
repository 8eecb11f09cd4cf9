"""Isolation of service chains: does one chain's trouble reach the others?

Per frame size, a baseline trial loads every chain at ``rate_pct``; then the same
trial with one chain disturbed: sent its own, higher ``load_pct`` and/or with a noisy
neighbour (a command) running on its own nodes while the trial runs. The result is,
per other chain, its loss, receive rate and latency in both trials and the change;
the chains are isolated when none of the others lost more than tolerated under the
disturbance (having lost nothing more in the baseline).
"""

from __future__ import annotations

import contextlib

from nsb import chains as service_chains
from nsb import units
from nsb.errors import RunError
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import (
    FAIL,
    GENERATOR_LIMITED,
    PASS,
    Measurer,
    SearchPoint,
)
from nsb.trial import Trial, TrialResult


class IsolationProfile(TrafficProfile):
    """One chain disturbed while the others are measured, against a baseline."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "duration": common.DURATION,
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "rate_pct": {"description": "every chain's load, in % of its ports' line rate",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 100},
            "disturbed_chain": {"description": "the chain disturbed (from 0)",
                                "type": "integer", "minimum": 0, "default": 0},
            "load_pct": {"description": "the disturbed chain's own load in the disturbed "
                                        "trial, in % of its ports' line rate",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 100},
            "neighbour": {"description": "a command run on the disturbed chain's own nodes "
                                         "during the disturbed trial (a noisy neighbour)",
                          "type": "string", "minLength": 1},
        },
        "required": ["rate_pct"],
        "anyOf": [{"required": ["load_pct"]}, {"required": ["neighbour"]}],
    }

    def check_chains(self, chains: tuple, where) -> None:
        """At plan time: two chains at least, and the disturbed one among them."""
        if len(chains) < 2:
            raise where.error("the isolation profile needs chains: N (2 or more) in its "
                              "scenario: one disturbed, the others measured", "type")
        if any(c.shared for c in chains):
            raise where.error("the isolation profile sends each chain its own rate on its own "
                              "port pairs; chains on one network share theirs (give each "
                              "chain its own network)", "type")
        if self.options["disturbed_chain"] >= len(chains):
            raise where.error(f"disturbed_chain {self.options['disturbed_chain']}: the "
                              f"scenario has chains 0 to {len(chains) - 1}", "disturbed_chain")

    def execute(self, measurer: Measurer) -> None:
        if len(measurer.chains) < 2:
            raise RunError("the isolation profile needs two chains or more")
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            base = self._trial(measurer, frame, disturbed=False)
            baseline = measurer.measure(base, SearchPoint.single(self.options["rate_pct"], 2),
                                        self._judge(measurer, base), why="baseline")
            if measurer.should_stop():
                return
            hit = self._trial(measurer, frame, disturbed=True)
            with self._neighbour(measurer):
                disturbed = measurer.measure(hit, SearchPoint.single(
                    self.options["rate_pct"], 1), self._judge(measurer, hit),
                    why=f"chain {self.options['disturbed_chain']} disturbed")
            self._result(measurer, frame, baseline.result, disturbed)

    def _trial(self, measurer: Measurer, frame: Frame, disturbed: bool) -> Trial:
        """Every pair at rate_pct of its line rate; the disturbed chain's at load_pct."""
        o = self.options
        pairs = sum(len(c.pairs) for c in measurer.chains)
        per_pair_ports = measurer.ports // pairs
        rates = [0.0] * pairs
        for chain in measurer.chains:
            pct = o.get("load_pct", o["rate_pct"]) if disturbed and \
                chain.index == o["disturbed_chain"] else o["rate_pct"]
            for pair in chain.pairs:
                rates[pair] = units.pct_to_pps(pct, frame, self.speed_gbps, per_pair_ports)
        return Trial(frame_size=frame, rate_pps=sum(rates), duration_s=float(o["duration"]),
                     flows=o.get("flows"), pair_rates_pps=tuple(rates))

    def _judge(self, measurer: Measurer, trial: Trial):
        """A trial passes when every measured chain (not the disturbed one) got its share
        and lost no more than tolerated."""
        tolerated = self.options["tolerated_loss_pct"]
        disturbed = self.options["disturbed_chain"]
        shares = service_chains.intended(measurer.chains, trial, 0)

        def judge(result: TrialResult):
            measured = [(c, s) for c, s in zip(result.chains, shares, strict=True)
                        if c.chain != disturbed]
            lossy = service_chains.over_tolerance(tuple(c for c, _ in measured), tolerated)
            if lossy:
                worst = lossy[0]
                return FAIL, f"chain {worst.chain} lost {worst.loss_pct:.4g}% > tolerated " \
                    f"{tolerated:g}%"
            short = service_chains.short_of_share(tuple(c for c, _ in measured),
                                                  [s for _, s in measured],
                                                  measurer.generator_tolerance)
            if short:
                chain, share = short[0]
                return GENERATOR_LIMITED, f"chain {chain.chain} was sent " \
                    f"{chain.tx_packets:,} of its {share:,.0f} frames"
            return PASS, f"every measured chain within {tolerated:g}%"
        judge.tolerated_loss_pct = tolerated
        return judge

    @contextlib.contextmanager
    def _neighbour(self, measurer: Measurer):
        """The noisy neighbour on each of the disturbed chain's own nodes, stopped after."""
        command = self.options.get("neighbour")
        chain = measurer.chains[self.options["disturbed_chain"]]
        if not command:
            yield
            return
        nodes = measurer.generator.context.nodes
        started = []
        try:
            for name in chain.nodes:
                started.append(nodes[name].executor.start(["sh", "-c", command]))
            yield
        finally:
            for process in started:
                process.stop(grace_s=2.0)

    def _result(self, measurer: Measurer, frame: Frame, baseline: TrialResult, done) -> None:
        o = self.options
        report = isolation_report(baseline, done.result, o["disturbed_chain"],
                                  o["tolerated_loss_pct"])
        report.update(rate_pct=o["rate_pct"], load_pct=o.get("load_pct"),
                      neighbour=o.get("neighbour"))
        measured = [c for c in done.result.chains if c.chain != o["disturbed_chain"]]
        received = sum(c.rx_packets for c in measured)
        sent = sum(c.tx_packets for c in measured)
        loss = 100.0 * max(0, sent - received) / sent if sent else 0.0
        limited_by = LimitedBy.NONE if done.verdict == PASS else LimitedBy.DUT
        measurer.result_ready(frame, done.result, self.speed_gbps, limited_by, 2,
                              self.spec.type, extra={"isolation": report},
                              reason="isolation: the measured chains' rate under the "
                                     "disturbance",
                              answer_pps=sum(c.rx_packets / service_chains.seconds_of(
                                  c, done.result) for c in measured),
                              loss_pct=loss)


def isolation_report(baseline: TrialResult, disturbed: TrialResult, chain: int,
                     tolerated_loss_pct: float) -> dict:
    """Per measured chain its loss, receive rate and latency in the baseline and under
    the disturbance, and the change; whether the chains were isolated."""
    rows = []
    for before, after in zip(baseline.chains, disturbed.chains, strict=True):
        if before.chain == chain:
            continue
        seen = {"baseline": _figures(before, baseline), "disturbed": _figures(after, disturbed)}
        change = {key: (seen["disturbed"][key] - seen["baseline"][key]
                        if seen["disturbed"][key] is not None
                        and seen["baseline"][key] is not None else None)
                  for key in seen["baseline"]}
        rows.append({"chain": before.chain, **seen, "change": change})
    load = next(c for c in disturbed.chains if c.chain == chain)
    return {"disturbed_chain": chain,
            "disturbed_sent_pps": load.tx_packets / service_chains.seconds_of(load, disturbed),
            "disturbed_loss_pct": load.loss_pct,
            "chains": rows,
            "baseline_clean": all(r["baseline"]["loss_pct"] <= tolerated_loss_pct
                                  for r in rows),
            "isolated": all(r["disturbed"]["loss_pct"] <= tolerated_loss_pct for r in rows)}


def _figures(share, result: TrialResult) -> dict:
    latency = share.latency
    return {"loss_pct": share.loss_pct,
            "rx_pps": share.rx_packets / service_chains.seconds_of(share, result),
            "latency_avg_us": latency.avg_us if latency else None,
            "latency_p99_us": latency.percentiles_us.get("p99") if latency else None}
