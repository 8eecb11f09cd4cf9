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
