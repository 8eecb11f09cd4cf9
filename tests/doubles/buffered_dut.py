"""Test doubles for the RFC 2544 back-to-back and frame-loss profiles: a DUT with a
known buffer that forwards a known rate, and one whose loss per offered rate is known."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

from nsb import units
from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen


class _Double(TrafficGen):
    """The parts of a generator the profiles use."""

    SENDS_BURSTS = True

    def __init__(self, ports: int = 2):
        self.ports = ports
        self.trials: list[Trial] = []
        self.name = "double"
        self.node = SimpleNamespace(name="sim")
        self.spec = SimpleNamespace(type="double")

    @property
    def tx_port_count(self) -> int:
        return self.ports

    def instantiate(self) -> None: ...

    def wait_until_ready(self, timeout: float) -> None: ...

    def terminate(self) -> None: ...


class BufferedDut(_Double):
    """Frames arrive at the trial's rate, leave at ``forward_pps``; ``buffer_frames``
    wait in between. A burst of n frames loses none while the queue, growing by
    (1 - forward/rate) a frame per frame, stays within the buffer."""

    def __init__(self, buffer_frames: int, forward_pps: float = 0.0, max_burst: int | None = None,
                 ports: int = 2):
        super().__init__(ports)
        self.buffer_frames, self.forward_pps, self.max_burst = buffer_frames, forward_pps, max_burst

    def longest_loss_free(self, rate_pps: float) -> int:
        """The exact answer: the longest burst at ``rate_pps`` that loses nothing."""
        growth = 1.0 - min(1.0, self.forward_pps / rate_pps)
        if growth <= 0:
            return 10**12
        return math.floor((self.buffer_frames + 1e-9) / growth)

    def run_trial(self, trial: Trial) -> TrialResult:
        self.trials.append(trial)
        assert trial.burst_frames is not None and not trial.latency
        asked = trial.burst_frames
        sent = asked if self.max_burst is None else min(asked, self.max_burst)
        received = min(sent, self.longest_loss_free(trial.rate_pps))
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received, elapsed_s=0.01,
                           intended_packets=asked)


class LossCurveDut(_Double):
    """Loses ``loss_at(pct)`` per cent of the frames offered at ``pct`` % of line rate."""

    def __init__(self, loss_at: Callable[[float], float], speed_gbps: float, ports: int = 2):
        super().__init__(ports)
        self.loss_at, self.speed_gbps = loss_at, speed_gbps

    def run_trial(self, trial: Trial) -> TrialResult:
        self.trials.append(trial)
        pct = units.pps_to_pct(trial.rate_pps, trial.frame_size, self.speed_gbps, self.ports)
        sent = round(trial.rate_pps * trial.duration_s)
        received = sent - round(sent * self.loss_at(round(pct, 6)) / 100.0)
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=trial.duration_s, intended_packets=sent)
