"""Simulated DUTs for search benchmarks: run_trial without packets, seeded.

Models (C = capacity in pps):
  M0  hard capacity: loss only above C.
  M1  livelock: under overload it forwards less than C.
  M2  buffer of 10 ms at C: short trials hide loss just above C.
  M3  noisy: 0.2% capacity jitter per trial, rare stalls (one per ~300 s of
      traffic, each losing 10 ms of frames), 2% chance per trial of a 1% loss spike.
  M4  very noisy: 1% jitter, a stall per ~30 s, 10% chance of a 1% spike.
  D1  capacity drifting +/-1% with a 10 min period (over trial time plus 1 s per
      trial), D2 the same with a 20 min period.
  R1  rare loss: within 0.5% below C, one loss event (16 frames) per ~100 s of
      traffic; the true zero-loss rate is 0.995 C.
  R2  rate-dependent rare loss: from 0.99 C up, loss events grow from none to one
      per ~100 s at C; the true zero-loss rate is 0.99 C.
  L1  livelock with M3's noise.
  P1  dual-rate policer: a 50 ms burst allowance above C, nothing above 1.02 C.
  V1  very noisy as users meet it: 0.5% jitter, a stall per ~60 s, 5% spike chance.
  B1  rare large loss bursts: a 100 ms stall per ~1000 s of traffic, nothing else.

Families whose parameters each seed draws anew (uniformly, from its own stream),
so that what is shown on them is not tuned to one DUT:
  NX  noisy: jitter 0-0.5%, a stall (5-50 ms) per 60-1000 s, spike chance 0-5%.
  BX  bursty: a stall of 20-300 ms per 200-3000 s of traffic.
  LX  livelocked (0.1-1.0 of the overload lost again) with NX's noise.
"""

from __future__ import annotations

import math
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
    "D1": {"drift": 0.01, "drift_period_s": 600.0},
    "D2": {"drift": 0.01, "drift_period_s": 1200.0},
    "R1": {"rare_every_s": 100.0, "rare_from": 0.995, "rare_flat": True, "ndr": 0.995},
    "R2": {"rare_every_s": 100.0, "rare_from": 0.99, "ndr": 0.99},
    "L1": {"livelock": 0.5, "jitter": 0.002, "stall_every_s": 300.0, "spike_chance": 0.02},
    "P1": {"buffer_s": 0.050, "peak": 1.02},
    "V1": {"jitter": 0.005, "stall_every_s": 60.0, "spike_chance": 0.05},
    "B1": {"stall_every_s": 1000.0, "stall_s": 0.100},
    "NX": {"jitter": (0.0, 0.005), "stall_every_s": (60.0, 1000.0), "stall_s": (0.005, 0.050),
           "spike_chance": (0.0, 0.05)},
    "BX": {"stall_every_s": (200.0, 3000.0), "stall_s": (0.020, 0.300)},
    "LX": {"livelock": (0.1, 1.0), "jitter": (0.0, 0.005), "stall_every_s": (60.0, 1000.0),
           "stall_s": (0.005, 0.050), "spike_chance": (0.0, 0.05)},
}


def drawn(model: str, seed: int) -> dict:
    """A model's parameters for one seed: a (low, high) range is drawn uniformly."""
    rng = random.Random(f"sim-dut-model:{model}:{seed}")
    return {k: rng.uniform(*v) if isinstance(v, tuple) else v
            for k, v in sorted(MODELS[model].items())}


def true_ndr(model: str, capacity_pps: float) -> float:
    """The highest rate a model forwards without any loss, on average over its noise."""
    return capacity_pps * MODELS[model].get("ndr", 1.0)


class SimulatedDut(TrafficGen):
    """A DUT model behind a perfect generator; counts trials and trial-seconds."""

    def __init__(self, model: str, capacity_pps: float, seed: int):
        self.model = drawn(model, seed)
        self.capacity_pps = capacity_pps
        self.seed = seed
        self.trials = 0
        self.trial_seconds = 0.0
        self.clock = 0.0  # trial time plus 1 s of control per trial
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
        self.clock += trial.duration_s + 1.0
        offered = round(trial.rate_pps * trial.duration_s)
        capacity = self.capacity_pps * (1 + rng.gauss(0, m.get("jitter", 0.0)))
        if "drift" in m:
            phase = random.Random(f"sim-dut-phase:{self.seed}").uniform(0, 2 * math.pi)
            capacity *= 1 + m["drift"] * math.sin(2 * math.pi * self.clock
                                                   / m["drift_period_s"] + phase)
        if trial.rate_pps <= capacity:
            forwarded = offered
        else:
            over = trial.rate_pps / capacity - 1
            rate = capacity * max(0.0, 1 - m.get("livelock", 0.0) * over)
            forwarded = round(rate * trial.duration_s)
            buffer = capacity * m.get("buffer_s", 0.0)
            forwarded = min(offered, round(forwarded + buffer))
            if "peak" in m:
                forwarded = min(forwarded, round(capacity * m["peak"] * trial.duration_s))
        lost = offered - forwarded
        if "rare_every_s" in m and trial.rate_pps >= m["rare_from"] * capacity:
            share = 1.0 if m.get("rare_flat") else min(1.0, (
                trial.rate_pps / capacity - m["rare_from"]) / (1 - m["rare_from"]))
            events = _poisson(rng, share * trial.duration_s / m["rare_every_s"])
            lost += 16 * events
        if "stall_every_s" in m:
            stalls = _poisson(rng, trial.duration_s / m["stall_every_s"])
            lost += round(stalls * m.get("stall_s", 0.010) * trial.rate_pps)
        if rng.random() < m.get("spike_chance", 0.0):
            lost += round(0.01 * offered)
        lost = min(offered, lost)
        return TrialResult(trial=trial, tx_packets=offered, rx_packets=offered - lost,
                           elapsed_s=trial.duration_s,
                           intended_packets=offered, extra={"probe_packets": 0})


def _poisson(rng: random.Random, mean: float) -> int:
    count, total = 0, rng.expovariate(1.0)
    while total < mean:
        count += 1
        total += rng.expovariate(1.0)
    return count
