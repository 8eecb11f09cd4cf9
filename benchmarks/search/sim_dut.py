"""Simulated DUTs for search benchmarks: run_trial without packets, seeded.

Models (C = capacity in pps):
  M0  hard capacity: loss only above C.
  M1  livelock: under overload it forwards less than C.
  M2  buffer of 10 ms at C: short trials hide loss just above C.
  M3  noisy: 0.2% capacity jitter per trial, rare stalls (one per ~300 s of
      traffic, each losing 10 ms of frames), 2% chance per trial of a 1% loss spike.
  M4  very noisy: 1% jitter, a stall per ~30 s, 10% chance of a 1% spike.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen

MODELS = {
    "M0": {},
    "M1": {"livelock": 0.5},
    "M2": {"buffer_s": 0.010},
    "M3": {"jitter": 0.002, "stall_every_s": 300.0, "spike_chance": 0.02},
    "M4": {"jitter": 0.01, "stall_every_s": 30.0, "spike_chance": 0.10},
}


class SimulatedDut(TrafficGen):
    """A DUT model behind a perfect generator; counts trials and trial-seconds."""

    def __init__(self, model: str, capacity_pps: float, seed: int):
        self.model = MODELS[model]
        self.capacity_pps = capacity_pps
        self.seed = seed
        self.trials = 0
        self.trial_seconds = 0.0
        self.name = "sim"
        self.node = SimpleNamespace(name="sim")
        self.spec = SimpleNamespace(type="sim")

    @property
    def tx_port_count(self) -> int:
        return 1

    def instantiate(self) -> None: ...

    def wait_until_ready(self, timeout: float) -> None: ...

    def terminate(self) -> None: ...

    def run_trial(self, trial: Trial) -> TrialResult:
        # Each trial draws its noise from its own stream, keyed by seed and trial number:
        # independent of the capacity (drawn from Random(seed) by the benchmark) and of
        # what earlier trials drew, so profiles that take different paths see the same
        # noise at the same trial number.
        m, rng = self.model, random.Random(f"sim-dut:{self.seed}:{self.trials}")
        self.trials += 1
        self.trial_seconds += trial.duration_s
        offered = round(trial.rate_pps * trial.duration_s)
        capacity = self.capacity_pps * (1 + rng.gauss(0, m.get("jitter", 0.0)))
        if trial.rate_pps <= capacity:
            forwarded = offered
        else:
            over = trial.rate_pps / capacity - 1
            rate = capacity * max(0.0, 1 - m.get("livelock", 0.0) * over)
            forwarded = round(rate * trial.duration_s)
            buffer = capacity * m.get("buffer_s", 0.0)
            forwarded = min(offered, round(forwarded + buffer))
        lost = offered - forwarded
        if "stall_every_s" in m:
            stalls = _poisson(rng, trial.duration_s / m["stall_every_s"])
            lost += round(stalls * 0.010 * trial.rate_pps)
        if rng.random() < m.get("spike_chance", 0.0):
            lost += round(0.01 * offered)
        lost = min(offered, lost)
        return TrialResult(trial=trial, tx_packets=offered, rx_packets=offered - lost,
                           elapsed_s=trial.duration_s,
                           extra={"requested_packets": offered, "probe_packets": 0})


def _poisson(rng: random.Random, mean: float) -> int:
    count, total = 0, rng.expovariate(1.0)
    while total < mean:
        count += 1
        total += rng.expovariate(1.0)
    return count
