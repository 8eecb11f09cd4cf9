"""What the run does around each trial, as a traffic profile's measurer sees it: the
defaults do nothing, so a profile's unit test needs no run (nsb.scenario_hooks is the
run's)."""

from __future__ import annotations

from nsb.dut_feed import DutWatch
from nsb.frames import Frame
from nsb.loss_budget import TrialPaths
from nsb.trial import TrialResult


class TrialHooks:
    """What the run does around each trial; the defaults do nothing (a profile's
    unit test needs none). The engine samples the NFVi during a trial, the VNFs'
    KPIs after it, and adds the VNFs' figures to each result."""

    def trial_started(self, index: int) -> None:
        """Traffic of trial ``index`` is about to start."""

    def trial_measured(self, index: int, result: TrialResult | None = None) -> None:
        """Traffic of trial ``index`` has ended (``result``: its counters, None for a
        sample without a trial). An NsbError (a VNF died) is raised to the profile
        once the trial is recorded: the trial is kept."""

    def trial_paths(self, index: int) -> TrialPaths | None:
        """Where trial ``index``'s frames went, per direction (after trial_measured)."""
        return None

    def sessions_started(self, index: int, open_only: bool = False,
                         reset: bool = True) -> None:
        """Stateful trial ``index`` is about to start: the DUTs that keep state reset
        (unless ``reset`` is False); ``open_only``: its sessions are held, so count only
        those open at once."""

    def sessions_counted(self, index: int) -> int | None:
        """The most sessions the DUTs held during stateful trial ``index`` (their own
        count); None without a DUT that keeps state."""
        return None

    def result_kpis(self, frame_size: Frame, throughput_pps: float) -> dict:
        """Figures added to the result of a frame size (``ResultReady.extra``)."""
        return {}

    def watch_duts(self, interval_s: float) -> DutWatch:
        """The DUTs' own port counters read every ``interval_s`` while a trial runs
        (a context around the trial; nsb.dut_feed)."""
        return DutWatch([], interval_s)

    def perform(self, event: dict) -> None:
        """Perform ``event`` (nsb.vnf_events) on its VNF now, returning when it is over."""
        raise NotImplementedError("no VNF here performs events")

    def prepare(self, event: dict) -> None:
        """What ``event`` needs before the trial's traffic (a rule churn's rules)."""

    def neighbour(self, spec: dict):
        """A context in which a noisy neighbour (nsb.neighbours) runs where ``spec`` says;
        its ``ran`` says what ran where."""
        raise NotImplementedError("no node here runs a neighbour")

    def missing_cpus(self, spec: dict) -> list[int]:
        """The CPUs a neighbour is pinned to that its node does not have."""
        return []

    def flush_addresses(self) -> None:
        """Every learning switch forgets the addresses it learned."""

    def address_table(self) -> list[tuple[list[str], int | None]]:
        """Each learning switch's table now: its MACs and its maximum (None: unstated)."""
        return []
