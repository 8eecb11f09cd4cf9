"""The typed, frozen model a task file becomes after loading and validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nsb.errors import TaskError
from nsb.task.documents import Where


@dataclass(frozen=True)
class PluginSpec:
    """A plugin named by ``type`` with its options, as written in the task."""

    type: str
    options: Mapping
    where: Where
    name: str = ""
    type_key: str = "type"  # NSB's traffic profile files say traffic_type

    @property
    def options_where(self) -> Where:
        """Where the options live (errors about an option point here)."""
        return self.where

    def type_error(self, message: str) -> TaskError:
        return self.where.error(message, self.type_key)


@dataclass(frozen=True)
class VnfSpec(PluginSpec):
    node: str = ""
    options_at: Where | None = None  # where the options are, when not under ``options:``
    # NSB topologies: interface -> the id of the link (vld) it is on (uplink_0, ...)
    networks: Mapping = field(default_factory=dict)
    # NSB scenarios: the options not keyed by a VNF (traffic_type, flow, ...)
    scenario_options: Mapping = field(default_factory=dict)
    # the CPUs its lcores come from ({"cpus": "2", "main": 0}; a chain template's pool)
    pool_cores: Mapping = field(default_factory=dict)

    @property
    def options_where(self) -> Where:
        if self.options_at is not None:
            return self.options_at
        return Where(self.where.doc, self.where.path + ("options",))


@dataclass(frozen=True)
class ScenarioSpec:
    name: str
    vnfs: tuple[VnfSpec, ...]
    # None when the task does not say which VNF is the generator (NSB's tasks bind
    # every VNF alike): planning picks the one of ``vnfs`` whose plugin is one
    generator: VnfSpec | None
    profile: PluginSpec
    runner: PluginSpec
    members_where: Where | None = None  # where the scenario lists its VNFs
    sweep: Mapping = field(default_factory=dict)  # the task args of its sweep point
    chains: int = 1  # service chains over the generator's port pairs (nsb.chains)
    chains_where: Where | None = None  # where the task says how many


@dataclass(frozen=True)
class Task:
    file: Path
    context: PluginSpec
    scenarios: tuple[ScenarioSpec, ...]
    outputs: tuple[PluginSpec, ...]
    description: str = ""
    args: Mapping = field(default_factory=dict)
    # contexts after the first (``contexts:``): their nodes join the first's
    more_contexts: tuple[PluginSpec, ...] = ()
    notice: str = ""  # printed before the task runs
    sweep: tuple = ()  # the sweep's points (task args per point), in run order
