"""`nsb task start --calibrate`: the generator's own connection rate, measured before the
task with the DUT taken out (its ports cabled to each other, port to port), given to
each CPS scenario as its ``generator_ceiling_cps``: an answer within 5 % of it is the
generator's, not the DUT's (FD.io CSIT's ip4base twin of its NAT44 tests).

The twin is the task's own lab (a ``netns`` context) with only the generator's node, its
ports linked pair by pair, and each CPS scenario's generator and profile without VNFs;
it runs as a task of its own (its results beside the task's). A pod's cables cannot be
changed from here: there the calibration is a task written for the generator's ports
cabled back to back (samples/stateful/tc_astf_calibrate.yaml).
"""

from __future__ import annotations

from dataclasses import replace

from nsb.task.model import PluginSpec, ScenarioSpec, Task

PROFILE = "cps"  # the profile whose answer a generator ceiling bounds
LAB = "netns"


def calibrated(scenario: ScenarioSpec) -> bool:
    return scenario.profile.type == PROFILE and scenario.generator is not None


def twin(task: Task) -> Task:
    """The task's CPS scenarios with the generator port to port; one located line when
    there is none, or the context is not the lab's."""
    scenarios = [s for s in task.scenarios if calibrated(s)]
    if not scenarios:
        first = task.scenarios[0].profile
        raise first.type_error(f"--calibrate measures the generator's ceiling for "
                               f"'{PROFILE}' scenarios; this task has none")
    if task.context.type != LAB or task.more_contexts:
        raise task.context.where.error(
            f"--calibrate takes the DUT out in the embedded lab ({LAB} context); on a "
            f"'{task.context.type}' context cable the generator's ports back to back and "
            "run samples/stateful/tc_astf_calibrate.yaml, then give its answer as the "
            "profile's generator_ceiling_cps", "type")
    nodes = task.context.options.get("nodes") or {}
    wanted = {s.generator.node for s in scenarios}
    kept = {name: node for name, node in nodes.items() if name in wanted}
    links = [pair for name in sorted(kept) for pair in _port_to_port(name, kept[name])]
    context = replace(task.context, options={**task.context.options, "nodes": kept,
                                             "links": links})
    return replace(task, context=context, description=f"calibration of {task.file.name}: the "
                   "generator port to port", scenarios=tuple(
                       replace(s, name=f"{s.name}_calibration", vnfs=(), chains=1,
                               profile=_without_ceiling(s.profile)) for s in scenarios),
                   sweep=())


def with_ceilings(task: Task, ceilings: dict[str, float]) -> Task:
    """The task with each CPS scenario's generator ceiling (by scenario name) set."""
    def ceiling(scenario: ScenarioSpec) -> ScenarioSpec:
        cps = ceilings.get(f"{scenario.name}_calibration")
        if not calibrated(scenario) or not cps:
            return scenario
        options = {**scenario.profile.options, "generator_ceiling_cps": cps}
        return replace(scenario, profile=replace(scenario.profile, options=options))
    return replace(task, scenarios=tuple(ceiling(s) for s in task.scenarios))


def ceilings(results: list[dict]) -> dict[str, float]:
    """The calibration's answers (connections a second each scenario's generator
    opened port to port)."""
    made = {}
    for result in results:
        stateful = result.get("stateful") or {}
        if stateful.get("cps"):
            made[result["scenario"]] = float(stateful["cps"])
    return made


def _port_to_port(node: str, spec) -> list[list[str]]:
    """The node's ports cabled pair by pair, in their order: xe0-xe1, xe2-xe3, ..."""
    ports = list((spec or {}).get("interfaces") or {})
    return [[f"{node}:{a}", f"{node}:{b}"] for a, b in zip(ports[::2], ports[1::2],
                                                          strict=False)]


def _without_ceiling(profile: PluginSpec) -> PluginSpec:
    options = {k: v for k, v in profile.options.items() if k != "generator_ceiling_cps"}
    return replace(profile, options=options)
