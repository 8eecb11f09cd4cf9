"""A traffic generator: a simulated DUT that forwards up to capacity_pps."""

from __future__ import annotations

from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen


class SimulatedGenerator(TrafficGen):
    """Example generator: a simulated DUT that forwards up to capacity_pps."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["capacity_pps"],
        "properties": {"capacity_pps": {"type": "number", "exclusiveMinimum": 0},
                       "ports": {"type": "integer", "minimum": 1, "default": 1}},
        "examples": [{"capacity_pps": 100000}],
    }

    @property
    def tx_port_count(self) -> int:
        return self.options["ports"]

    def instantiate(self) -> None:
        self.executor.run(["true"])  # the node's executor works

    def wait_until_ready(self, timeout: float) -> None:
        return None

    def terminate(self) -> None:
        return None

    def run_trial(self, trial: Trial) -> TrialResult:
        sent = round(trial.rate_pps * trial.duration_s)
        received = min(sent, round(self.options["capacity_pps"] * trial.duration_s))
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=trial.duration_s)
