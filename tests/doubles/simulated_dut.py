"""Test double: a generator wired to a simulated DUT of known capacity (no packets).

Used to check profiles and the pipeline where real traffic is not the point.
"""

from __future__ import annotations

from types import SimpleNamespace

from nsb.trial import LatencyStats, Trial, TrialResult
from nsb.vnfs.base import TrafficGen


class SimulatedDutGenerator(TrafficGen):
    """Double: forwards up to capacity_pps; the generator itself tops out at max_tx_pps."""

    def __init__(self, capacity_pps: float, max_tx_pps: float = float("inf"), ports: int = 2,
                 fail_after_trials: int | None = None):
        self.capacity_pps = capacity_pps
        self.max_tx_pps = max_tx_pps
        self.ports = ports
        self.fail_after_trials = fail_after_trials
        self.trials: list[Trial] = []
        self.name = "simulated"
        self.node = SimpleNamespace(name="sim")
        self.spec = SimpleNamespace(type="simulated_dut")

    def describe(self) -> dict:
        return {"type": "simulated_dut", "capacity_pps": self.capacity_pps}

    @property
    def tx_port_count(self) -> int:
        return self.ports

    def instantiate(self) -> None: ...

    def wait_until_ready(self, timeout: float) -> None: ...

    def terminate(self) -> None: ...

    def run_trial(self, trial: Trial) -> TrialResult:
        if self.fail_after_trials is not None and len(self.trials) >= self.fail_after_trials:
            from nsb.errors import RunError

            raise RunError("simulated generator failure")
        self.trials.append(trial)
        asked = round(trial.rate_pps * trial.duration_s)
        sent = round(min(trial.rate_pps, self.max_tx_pps) * trial.duration_s)
        received = min(sent, round(self.capacity_pps * trial.duration_s))
        load = min(trial.rate_pps, self.max_tx_pps) / self.capacity_pps
        base = 10.0 + 90.0 * min(load, 1.0) ** 4
        latency = LatencyStats(samples=100, min_us=base * 0.8, avg_us=base, max_us=base * 3,
                               percentiles_us={"p50": base, "p90": base * 1.5, "p99": base * 2,
                                               "p99.9": base * 2.5})
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=trial.duration_s, latency=latency,
                           generator_limited=sent < 0.95 * asked,
                           intended_packets=asked, extra={"probe_packets": 0})


class SimulatedChainsGenerator(SimulatedDutGenerator):
    """Double: one port pair per service chain (``capacities_pps``, one each); the rate
    asked is spread evenly over the chains, each forwarding up to its own capacity,
    from its pair's first port to its second. ``send_caps_pps``: the most the generator
    gets onto each chain's link (None: all it is asked), as a rate limit on its port's
    egress or a port it cannot drive faster; it counts only what went out, and is
    generator-limited, as TRex, when it sent more than 5 % fewer frames than asked."""

    def __init__(self, capacities_pps: list[float],
                 send_caps_pps: list[float | None] | None = None,
                 shared_pps: float | None = None):
        super().__init__(sum(capacities_pps), ports=len(capacities_pps))
        self.capacities_pps = capacities_pps
        self.send_caps_pps = send_caps_pps or [None] * len(capacities_pps)
        # the most the chains forward together (one core they share): above it each
        # forwards its part of it in proportion to what it was sent; None: no such limit
        self.shared_pps = shared_pps

    def port_pairs(self) -> list[tuple[str, str]]:
        return [(f"xe{2 * k}", f"xe{2 * k + 1}") for k in range(len(self.capacities_pps))]

    def run_trial(self, trial: Trial) -> TrialResult:
        result = super().run_trial(trial)
        n = len(self.capacities_pps)
        asked = [r * trial.duration_s for r in trial.pair_rates_pps] if \
            trial.pair_rates_pps else [result.tx_packets / n] * n
        outs = [round(a) if cap is None else min(round(a), round(cap * trial.duration_s))
                for a, cap in zip(asked, self.send_caps_pps, strict=True)]
        together = sum(outs) / trial.duration_s
        squeeze = min(1.0, self.shared_pps / together) if self.shared_pps and together else 1.0
        ports, received, latency = {}, 0, {}
        for k, ((a, b), capacity, out) in enumerate(zip(self.port_pairs(), self.capacities_pps,
                                                        outs, strict=True)):
            got = min(out, round(capacity * trial.duration_s), int(out * squeeze))
            ports[a] = {"tx_packets": out, "rx_packets": 0}
            ports[b] = {"tx_packets": 0, "rx_packets": got}
            received += got
            base = 10.0 + 90.0 * (1.0 - squeeze)  # a squeezed chain waits longer
            latency[k] = LatencyStats(samples=100, min_us=base * 0.8, avg_us=base,
                                      max_us=base * 3, percentiles_us={"p99": base * 2})
        sent = sum(outs)
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=result.elapsed_s, latency=result.latency,
                           intended_packets=result.intended_packets, ports=ports,
                           generator_limited=sent < result.intended_packets * 0.95,
                           pair_latency=latency)
