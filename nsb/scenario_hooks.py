"""What the run does around each trial of a scenario (``TrialHooks``): NFVi sampled
while it runs; afterwards the VNFs checked, their KPIs read and the trial's frames laid
along its paths; the VNFs' figures added to results."""

from __future__ import annotations

import logging
import signal
from typing import Protocol

from nsb import neighbours, vnf_events
from nsb.contexts.base import Context
from nsb.dut_feed import DutWatch
from nsb.errors import RunError
from nsb.event_bus import EventBus
from nsb.events import KpiSample
from nsb.frames import Frame
from nsb.loss_budget import TrialPaths
from nsb.nodes.nfvi import NfviSampler
from nsb.runinfo import RunInfo
from nsb.session_witness import SessionWitness
from nsb.task.model import ScenarioSpec
from nsb.traffic_profiles.measurer import TrialHooks
from nsb.trial import TrialResult
from nsb.trial_paths import PathCounter
from nsb.vnfs.base import TrafficGen, Vnf

LOG = logging.getLogger(__name__)


class Scenario(Protocol):
    """What the hooks read of a scenario's plan (nsb.engine.ScenarioPlan)."""

    spec: ScenarioSpec
    vnfs: list[Vnf]
    generator: TrafficGen


class ScenarioHooks(TrialHooks):
    """What the run does around a scenario's trials: the NFVi sampled during each,
    the VNFs checked and their KPIs read after it, their figures added to results,
    each trial's frames laid along its paths (nsb.trial_paths)."""

    def __init__(self, scenario: Scenario, context: Context, run: RunInfo, bus: EventBus,
                 sampler: NfviSampler):
        self.scenario, self.context, self.run = scenario, context, run
        self.bus, self.sampler = bus, sampler
        self.paths = PathCounter(scenario.generator, scenario.vnfs, context)
        self._last_paths: tuple[int, TrialPaths | None] = (-1, None)
        profile = getattr(scenario, "profile", None)
        self.witness = SessionWitness(scenario.vnfs, reset=bool(
            (getattr(profile, "options", None) or {}).get("reset_state", True)))

    def sessions_started(self, index: int, open_only: bool = False,
                         reset: bool = True) -> None:
        self.witness.start(open_only, reset)

    def sessions_counted(self, index: int) -> int | None:
        return self.witness.peak()

    def trial_started(self, index: int) -> None:
        if not self.paths.has_baseline:  # the counters before the scenario's first trial
            self._laid_out(lambda: self.paths.baseline(
                {vnf.name: vnf.collect_kpi() for vnf in self.scenario.vnfs}))
        self.sampler.start(index)

    def trial_measured(self, index: int, result: TrialResult | None = None) -> None:
        self.sampler.stop()
        if self.sampler.failure is not None:
            raise self.sampler.failure
        death = vnf_death([*self.scenario.vnfs, self.scenario.generator])
        if death is not None:
            raise death
        samples = [(vnf.name, vnf.node.name, vnf.collect_kpi()) for vnf in self.scenario.vnfs]
        samples += [(c.source, c.node, c.kpis) for c in self.context.collect_kpi()]
        for source, node, kpis in samples:
            if kpis:
                self.bus.emit(KpiSample(self.run.task_id, self.scenario.spec.name,
                                        source=source, node=node, kpis=kpis, trial_index=index))
        if result is not None:
            kpis = {source: kpis for source, _, kpis in samples}
            self._last_paths = (index, self._laid_out(lambda: self.paths.trial(kpis, result)))

    def trial_paths(self, index: int) -> TrialPaths | None:
        found, paths = self._last_paths
        return paths if found == index else None

    @staticmethod
    def _laid_out(read):
        """Counters for the paths are a view of the trial, never a reason to stop it."""
        try:
            return read()
        except Exception as exc:  # noqa: BLE001  (an unreadable counter: no path)
            LOG.warning("the trial's path could not be laid out: %s", exc)
            return None

    def watch_duts(self, interval_s: float) -> DutWatch:
        feeds = [(vnf.name, vnf.executor, feed) for vnf in self.scenario.vnfs
                 if (feed := vnf.counter_feed()) is not None]
        return DutWatch(feeds, interval_s)

    def perform(self, event: dict) -> None:
        vnf_events.target(self.scenario.vnfs, event).perform_event(event)

    def prepare(self, event: dict) -> None:
        vnf_events.target(self.scenario.vnfs, event).prepare_event(event)

    def _neighbour_node(self, spec: dict):
        name = spec.get("node") or (self.scenario.vnfs[0].node.name if self.scenario.vnfs
                                    else self.scenario.generator.node.name)
        if name not in self.context.nodes:
            raise RunError(f"the neighbour's node '{name}' is none of the context's nodes "
                           f"({', '.join(self.context.nodes)})")
        return self.context.nodes[name]

    def neighbour(self, spec: dict):
        node = self._neighbour_node(spec)
        return neighbours.Neighbour(node.executor, spec, self.run.task_id, node.name)

    def missing_cpus(self, spec: dict) -> list[int]:
        return neighbours.missing_cpus(self._neighbour_node(spec).executor, spec["cpus"])

    def _learners(self) -> list[Vnf]:
        return [vnf for vnf in self.scenario.vnfs if not vnf.learns_addresses()]

    def flush_addresses(self) -> None:
        for vnf in self._learners():
            vnf.flush_addresses()

    def address_table(self) -> list[tuple[list[str], int | None]]:
        return [vnf.address_table() for vnf in self._learners()]

    def result_kpis(self, frame_size: Frame, throughput_pps: float) -> dict:
        merged: dict = {}
        for vnf in self.scenario.vnfs:
            merged.update(vnf.result_kpis(frame_size, throughput_pps))
        return merged


def vnf_death(vnfs: list[Vnf]) -> RunError | None:
    """'testpmd0 (testpmd) on node sut was killed by SIGKILL during the run; ...' for
    the first VNF whose long-running process has ended, else None."""
    for vnf in vnfs:
        for process in vnf.processes():
            try:
                code = process.poll()
            except Exception:  # noqa: BLE001  (a lost SSH session says nothing here)
                continue
            if code is None:
                continue
            if code < 0:
                try:
                    how = f"was killed by {signal.Signals(-code).name}"
                except ValueError:
                    how = f"was killed by signal {-code}"
            else:
                how = f"exited with code {code}"
            return RunError(f"{vnf.name} ({vnf.spec.type}) on node {vnf.node.name} {how} "
                            "during the run; the trials measured before are kept")
    return None
