"""Everything measured is an event, delivered in order to every output.

Outputs never call back into the run; the CLI's progress line is one more
listener.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from nsb.frames import Frame
from nsb.intervals import IntervalSample
from nsb.loss_budget import TrialPaths
from nsb.trial import LatencyStats, Trial, TrialResult


class Verdict(StrEnum):
    """A profile's judgement of one trial."""

    PASS = "pass"
    FAIL = "fail"  # the DUT lost more than the profile tolerates
    GENERATOR_LIMITED = "generator_limited"  # the generator could not send the rate
    LATENCY = "latency"  # a trial for latency at a fraction of the answer, not judged


class LimitedBy(StrEnum):
    """What kept a frame size's answer from being higher."""

    DUT = "dut"
    GENERATOR = "generator"
    UPPER_BOUND = "upper_bound"  # every trial passed, up to the profile's upper bound
    LOWER_BOUND = "lower_bound"  # the answer is at the profile's lower bound (PLRsearch)
    NONE = "none"


class TaskStatus(StrEnum):
    """Where a run is or how it ended (results.json's task.status)."""

    RUNNING = "running"
    OK = "ok"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    KILLED = "killed"  # found dead by a later run


@dataclass(frozen=True)
class Event:
    task_id: str
    scenario: str
    timestamp: float = field(default_factory=time.time, kw_only=True)


@dataclass(frozen=True)
class ScenarioSummary:
    """What a scenario runs: its generator (by name) and traffic profile (by plugin)."""

    name: str
    generator: str
    profile: str


@dataclass(frozen=True)
class TaskStarted(Event):
    """The plan is bound and about to run."""

    task_file: str
    description: str
    plan: dict  # the plan as ``--dry-run`` prints it and results.json records it
    results_dir: str
    scenarios: tuple[ScenarioSummary, ...] = ()


@dataclass(frozen=True)
class PlatformFacts(Event):
    """What a node is (CPU, memory, kernel, NICs, versions)."""

    node: str
    facts: dict


@dataclass(frozen=True)
class TrialStarted(Event):
    """A trial is about to send traffic; carries the search state for progress."""

    iteration: int
    trial_index: int
    trial: Trial
    rate_pct: float
    lower_pct: float
    upper_pct: float
    trials_left: int
    # traffic seconds the profile may still run, this trial included (None: unknown);
    # the live line's time left comes from it when given
    seconds_left: float | None = None


@dataclass(frozen=True)
class TrialDone(Event):
    """One trial's counters and the profile's verdict on it; ``path``: where its frames
    went, per direction hop by hop (None where the run does not lay them out)."""

    iteration: int
    trial_index: int
    result: TrialResult
    verdict: Verdict
    rate_pct: float
    lower_pct: float
    upper_pct: float
    reason: str = ""
    path: TrialPaths | None = None


@dataclass(frozen=True)
class ResultReady(Event):
    """The answer for one frame size: the highest rate that passed."""

    iteration: int
    frame_size: Frame  # a size in bytes, or a mix (IMIX)
    throughput_pps: float
    throughput_mbps: float
    line_rate_pct: float
    loss_pct: float
    latency: LatencyStats | None
    limited_by: LimitedBy
    trials: int
    tx_packets: int = 0
    rx_packets: int = 0
    profile: str = ""
    extra: dict = field(default_factory=dict)
    limited_reason: str = ""  # why limited_by says what it says, in words
    # what the answer cannot vouch for, in words (a lossy confirmation, a lossy latency
    # trial): an answer with warnings is not comparable with another run
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SoakInterval(Event):
    """One interval of a long trial, counted while its traffic ran: a soak's loss and
    latency over time (the intervals of a trial sum to its counts)."""

    trial_index: int
    frame_size: Frame
    rate_pps: float  # the rate the trial offers
    sample: IntervalSample


@dataclass(frozen=True)
class PlrEstimate(Event):
    """PLRsearch's critical load after one trial: each fitting function's posterior
    mean and standard deviation, and their combination (the estimate and its spread)."""

    trial_index: int
    frame_size: Frame
    target_loss_ratio: float
    load_pps: float  # the trial's offered load
    duration_s: float
    lost_packets: int
    estimate_pps: float
    stdev_pps: float
    fits: dict[str, tuple[float, float]] = field(default_factory=dict)  # name: (mean, stdev)


@dataclass(frozen=True)
class KpiSample(Event):
    """KPIs of one VNF (or node) at one moment, tied to the trial it belongs to."""

    source: str
    node: str
    kpis: dict[str, float]
    trial_index: int | None = None


@dataclass(frozen=True)
class TaskFinished(Event):
    """The run ended: ok, error or interrupted."""

    status: TaskStatus
    error: str = ""
    duration_s: float = 0.0
