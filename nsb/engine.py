"""Plan (bind plugins to the task) and run (deploy, drive traffic, tear down).

Teardown always runs, in reverse order, on success, error, SIGINT and SIGTERM.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from nsb import chain_plan, plan_checks, plugins, sweep_tags
from nsb.contexts.base import Context
from nsb.contexts.combined import combine
from nsb.errors import Interrupted, NsbError
from nsb.event_bus import EventBus
from nsb.events import (
    Event,
    KpiSample,
    PlatformFacts,
    ScenarioSummary,
    TaskFinished,
    TaskStarted,
    TaskStatus,
)
from nsb.nodes import platform
from nsb.nodes.nfvi import NfviSampler, Watched
from nsb.nodes.nic_binding import NicBinder
from nsb.outputs.base import Output
from nsb.run_nodes import bind_nics, preflight, sign_in, sign_off
from nsb.runinfo import RunInfo
from nsb.runners.base import Runner
from nsb.scenario_hooks import ScenarioHooks, vnf_death
from nsb.task.documents import Where
from nsb.task.model import PluginSpec, ScenarioSpec, Task, VnfSpec
from nsb.task.yaml_lines import LocatedDocument
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer
from nsb.vnfs import memif_servers, pool_cores
from nsb.vnfs.base import TrafficGen, Vnf
from nsb.vnfs.readiness import wait_all_ready

LOG = logging.getLogger(__name__)


@dataclass
class ScenarioPlan:
    spec: ScenarioSpec
    vnfs: list[Vnf]
    generator: TrafficGen
    profile: TrafficProfile
    runner: Runner
    chains: tuple = ()  # its service chains (nsb.chains), when it has several


@dataclass
class Plan:
    task: Task
    run: RunInfo
    context: Context
    scenarios: list[ScenarioPlan]
    outputs: list[Output] = field(default_factory=list)
    # per output, who gave it: "task", or "nsb.conf" (its ``outputs`` option)
    output_sources: tuple[str, ...] = ()

    def summary(self) -> tuple[ScenarioSummary, ...]:
        """Per scenario its generator and profile, for outputs that tag with them."""
        return tuple(ScenarioSummary(s.spec.name, s.generator.name, s.profile.spec.type)
                     for s in self.scenarios)

    def _sources(self) -> list[str]:
        """Who gave each output; one added to the plan by hand is the task's."""
        given = list(self.output_sources)
        return given + ["task"] * (len(self.outputs) - len(given))

    def describe(self) -> dict:
        """The resolved plan, as ``--dry-run`` prints it and results record it."""
        return {
            "task_id": self.run.task_id,
            "task_file": str(self.task.file),
            "context": self.context.describe(),
            "scenarios": [{
                "name": s.spec.name,
                "vnfs": {v.name: v.describe() for v in s.vnfs},
                "traffic_generator": {s.generator.name: s.generator.describe()},
                "traffic_profile": s.profile.describe(),
                "runner": s.runner.describe(),
                **({"chains": {c.index: _chain_shown(c, s.vnfs) for c in s.chains}}
                   if s.chains else {}),
                **({"sweep": dict(s.spec.sweep)} if s.spec.sweep else {}),
            } for s in self.scenarios],
            **({"sweep": [dict(p) for p in self.task.sweep]} if self.task.sweep else {}),
            "outputs": [_output_shown(o, source) for o, source in zip(
                self.outputs, self._sources(), strict=True)],
        }


def _output_shown(output: Output, source: str) -> dict:
    """An output as the dry-run shows it: its type, who gave it, its settings."""
    described = output.describe()
    return {"type": described.pop("type", output.spec.type), "from": source, **described}


def _chain_shown(chain, vnfs: list[Vnf]) -> dict:
    """A chain as the dry-run shows it: its generator ports and the VNFs on its path,
    with their lcores where they have them."""
    lcores = {v.name: v.lcores() for v in vnfs if callable(getattr(v, "lcores", None))}
    return {"ports": list(chain.ports),
            "vnfs": {name: ({"lcores": lcores[name]} if name in lcores else {})
                     for name in chain.vnfs}}


def _instance(namespace: str, spec: PluginSpec, *args):
    cls = plugins.load_class(namespace, spec)
    options = plugins.check_options(cls, spec)
    return cls, cls(spec, options, *args)


def plan(task: Task, run: RunInfo) -> Plan:
    """Look every plugin up, check its options, bind VNFs to nodes. Touches nothing."""
    context = combine([_instance("nsb.contexts", spec, run)[1]
                       for spec in (task.context, *task.more_contexts)])
    scenarios = []
    for scenario in map(_with_generator, task.scenarios):
        vnfs = [_vnf(spec, context, run) for spec in scenario.vnfs]
        generator = _vnf(scenario.generator, context, run)
        if not isinstance(generator, TrafficGen):
            raise scenario.generator.type_error(
                f"'{scenario.generator.type}' is not a traffic generator; generators: "
                f"{', '.join(plugins.generator_names())}")
        _, profile = _instance("nsb.traffic_profiles", scenario.profile, run)
        if getattr(profile, "mix", None) is not None and not generator.SENDS_FRAME_MIX:
            why = generator.no_frame_mix_reason or "sends one frame size at a time"
            raise scenario.profile.options_where.error(
                f"IMIX: generator '{scenario.generator.type}' {why}; "
                f"generators that send a mix: {', '.join(plugins.mix_generator_names())}",
                "packet_sizes")
        if getattr(profile, "NEEDS_BURSTS", False) and not generator.SENDS_BURSTS:
            why = generator.no_burst_reason or "cannot send an exact burst of frames"
            raise scenario.generator.type_error(
                f"profile '{scenario.profile.type}' sends bursts: generator "
                f"'{scenario.generator.type}' {why}; generators that send bursts: "
                f"{', '.join(plugins.burst_generator_names())}")
        plan_checks.check_scenario(scenario, generator, vnfs, profile)
        _, runner = _instance("nsb.runners", scenario.runner, run)
        chains = chain_plan.service_chains(scenario, generator, vnfs, context)
        if hasattr(profile, "check_chains"):  # a profile made for chains (isolation)
            profile.check_chains(chains, scenario.profile.options_where)
        scenarios.append(ScenarioPlan(scenario, vnfs, generator, profile, runner, chains))
    outputs = [(spec, "task") for spec in task.outputs]
    outputs += [(spec, "nsb.conf") for spec in conf_outputs(task, run)]
    return Plan(task, run, context, scenarios,
                [_instance("nsb.outputs", spec, run)[1] for spec, _ in outputs],
                tuple(source for _, source in outputs))


def conf_outputs(task: Task, run: RunInfo) -> list[PluginSpec]:
    """The outputs nsb.conf gives every task (``outputs``, Yardstick's ``dispatcher``)
    whose type the task does not name: a task's own output keeps its options, and
    none is there twice. Their settings come from their nsb.conf sections."""
    named = {spec.type for spec in task.outputs}
    where = Where(LocatedDocument({}, "nsb.conf"), ("outputs",))
    return [PluginSpec(type=name, options={}, where=where)
            for name in dict.fromkeys(run.conf_outputs) if name not in named]


def _with_generator(scenario: ScenarioSpec) -> ScenarioSpec:
    """The scenario with its generator set: a task that names none (NSB's) has exactly
    one VNF whose plugin is a traffic generator."""
    if scenario.generator is not None:
        return scenario
    generators = [spec for spec in scenario.vnfs
                  if issubclass(plugins.load_class("nsb.vnfs", spec), TrafficGen)]
    if len(generators) != 1:
        raise scenario.members_where.error(
            f"not supported yet: {len(generators)} traffic generators in one scenario (nsb "
            "drives exactly one)")
    return replace(scenario, generator=generators[0],
                   vnfs=tuple(spec for spec in scenario.vnfs if spec is not generators[0]))


def _vnf(spec: VnfSpec, context: Context, run: RunInfo) -> Vnf:
    if spec.node not in context.nodes:
        raise spec.where.error(f"unknown node '{spec.node}'; the context has: "
                               f"{', '.join(context.nodes)}", "node")
    cls = plugins.load_class("nsb.vnfs", spec)
    if spec.pool_cores:
        spec = pool_cores.applied(cls, spec)
    options = plugins.check_options(cls, spec)
    return cls(spec, options, context.nodes[spec.node], context, run)


@contextlib.contextmanager
def signals_raise_interrupted():
    """SIGINT/SIGTERM become Interrupted in the main thread; later ones wait for teardown."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    def handler(signum, _frame):
        name = signal.Signals(signum).name
        if fired:
            LOG.warning("%s received again: still cleaning up", name)
            return
        fired.append(name)
        raise Interrupted(name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _torn_down(context):
    """Undeploy after the block. If the block failed, that failure is the task's error:
    a teardown that fails too is logged, not raised in its place."""
    try:
        yield
    except BaseException:
        try:
            context.undeploy()
        except Exception as exc:  # noqa: BLE001 - the block's error is the one to see
            LOG.error("teardown after the error failed too: %s", exc)
        raise
    context.undeploy()


def execute(plan: Plan, listeners: Iterable[Callable[[Event], None]] = ()) -> None:
    """Run the plan; every event reaches the outputs, TaskFinished always comes last."""
    run = plan.run
    bus = EventBus(plan.outputs, listeners)
    started = time.monotonic()
    status, message = TaskStatus.OK, ""
    with signals_raise_interrupted():
        try:
            bus.open()
            bus.emit(TaskStarted(run.task_id, "", task_file=str(plan.task.file),
                                 description=plan.task.description, plan=plan.describe(),
                                 results_dir=str(run.results_dir),
                                 scenarios=plan.summary()))
            with _torn_down(plan.context):
                LOG.info("deploying %s context", plan.context.spec.type)
                plan.context.deploy()
                nodes = list(plan.context.nodes.values())
                sign_in(nodes, run.task_id)
                binder = NicBinder(run.task_id)
                try:
                    facts: dict[str, dict] = {}
                    _collect_facts(plan, bus, facts)
                    vnfs = [vnf for scenario in plan.scenarios for vnf in _vnfs(scenario)]
                    preflight(vnfs, facts)
                    bind_nics(vnfs, binder)
                    for scenario in plan.scenarios:
                        _run_scenario(scenario, plan, bus, facts, binder)
                finally:
                    binder.give_back()
                    sign_off(nodes, run.task_id)
        except Interrupted as exc:
            status, message = TaskStatus.INTERRUPTED, str(exc)
            raise
        except NsbError as exc:
            status, message = TaskStatus.ERROR, str(exc)
            raise
        except BaseException as exc:
            status, message = TaskStatus.ERROR, f"{type(exc).__name__}: {exc}"
            raise
        finally:
            bus.emit(TaskFinished(run.task_id, "", status=status, error=message,
                                  duration_s=time.monotonic() - started))
            bus.close()


def _vnfs(scenario: ScenarioPlan) -> list[Vnf]:
    """The scenario's systems under test, then its generator."""
    return [*scenario.vnfs, scenario.generator]


def _collect_facts(plan: Plan, bus: EventBus, facts: dict[str, dict]) -> None:
    """Platform facts of every node that is up and has none yet."""
    for node in plan.context.nodes.values():
        if node.name not in facts and getattr(node, "executor", None) is not None:
            facts[node.name] = platform.collect(node.executor, node)
            bus.emit(PlatformFacts(plan.run.task_id, "", node=node.name,
                                   facts=facts[node.name]))


def _start(vnfs: list[Vnf], run: RunInfo, teardown: contextlib.ExitStack,
           started: Iterable[Vnf] = ()) -> None:
    """Instantiate in order (stopped in reverse), a memif client once its servers
    accept it, then wait until each is ready."""
    for index, vnf in enumerate(vnfs):
        teardown.callback(vnf.terminate)
        memif_servers.wait_for_servers(vnf, [*started, *vnfs[:index]], run.vnf_start_timeout_s)
        LOG.info("starting %s (%s) on %s", vnf.name, vnf.spec.type, vnf.node.name)
        vnf.instantiate()
    wait_all_ready(vnfs, run.vnf_start_timeout_s)


def _run_scenario(scenario: ScenarioPlan, plan: Plan, bus: EventBus,
                  facts: dict[str, dict], binder: NicBinder) -> None:
    name, run = scenario.spec.name, plan.run
    with contextlib.ExitStack() as teardown:
        # systems under test first, the generator last; the VNFs of pending nodes once
        # the others run (their switch), after those nodes came up
        pending = set(plan.context.pending_nodes())
        _start([vnf for vnf in _vnfs(scenario) if vnf.node.name not in pending], run, teardown)
        waiting = [vnf for vnf in _vnfs(scenario) if vnf.node.name in pending]
        if waiting:
            LOG.info("%s: bringing up %s now that their switch runs", name,
                     ", ".join(sorted(pending)))
            plan.context.deploy_pending()
            _collect_facts(plan, bus, facts)
            preflight(waiting, facts)
            bind_nics(waiting, binder)
            _start(waiting, run, teardown,
                   started=[vnf for vnf in _vnfs(scenario) if vnf not in waiting])
        _running_versions(_vnfs(scenario), run, bus)
        sampler = _nfvi_sampler(scenario, run, bus)
        teardown.callback(sampler.stop)
        emit = sweep_tags.tagging(bus.emit, scenario.spec.sweep)
        measurer = Measurer(scenario.generator, run.task_id, name, emit,
                            ScenarioHooks(scenario, plan.context, run, bus, sampler),
                            service_chains=scenario.chains, profile=scenario.profile.spec.type)

        def body(iteration: int, should_stop: Callable[[], bool]) -> None:
            measurer.start_iteration(iteration, should_stop)
            scenario.profile.execute(measurer)

        try:
            scenario.runner.execute(body)
        except Interrupted:
            raise
        except Exception as exc:  # a VNF that died is the cause, whatever failed next
            death = vnf_death(_vnfs(scenario))
            if death is not None and str(death) != str(exc):
                raise death from exc
            raise


def _running_versions(vnfs: list[Vnf], run: RunInfo, bus: EventBus) -> None:
    """What the running VNFs say they are, added to their node's platform facts."""
    by_node: dict[str, dict] = {}
    for vnf in vnfs:
        try:
            versions = vnf.software_versions()
        except NsbError as exc:  # a version is a fact, not a reason to stop
            LOG.debug("%s: no version: %s", vnf.name, exc)
            continue
        if versions:
            by_node.setdefault(vnf.node.name, {}).update(versions)
    for node, versions in by_node.items():
        bus.emit(PlatformFacts(run.task_id, "", node=node, facts={"versions": versions}))


def _nfvi_sampler(scenario: ScenarioPlan, run: RunInfo, bus: EventBus) -> NfviSampler:
    """Watches the long-running processes of the scenario's VNFs and generator."""
    vnfs = _vnfs(scenario)
    watched = [Watched(vnf.name, vnf.node.name, process.pid)
               for vnf in vnfs for process in vnf.processes()]
    executors = {vnf.node.name: vnf.node.executor for vnf in vnfs
                 if getattr(vnf.node, "executor", None) is not None}

    def emit(source: str, node: str, kpis: dict, trial_index: int) -> None:
        bus.emit(KpiSample(run.task_id, scenario.spec.name, source=source, node=node, kpis=kpis,
                           trial_index=trial_index))

    return NfviSampler(executors, watched, run.nfvi_interval_s, emit)
