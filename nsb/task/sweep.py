"""Sweeps: one task run for every combination of values of some task args.

A task file's top-level ``sweep:`` section (``{pmd_cores: [1, 2, 4], flows: [1, 1000]}``)
and ``--sweep NAME=V1,V2`` (repeatable) name task args and their values. The task is
rendered once per point (the combination of one value of each), and the scenarios of
every point run in one task, one after the other: one task id, one results file, each
result tagged with its point. The first name changes slowest, the last fastest, as
nested loops written in that order would.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from nsb.errors import TaskError
from nsb.task import render, yaml_lines
from nsb.task.model import Task

MAX_POINTS = 256  # each point runs the whole task
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ALLOWED = "a list of numbers, strings or booleans, e.g. [1, 2, 4]"


@dataclass(frozen=True)
class Axis:
    """One swept task arg, its values, and how to point an error at it."""

    name: str
    values: tuple
    error: Callable[[str], TaskError]


def point_label(point: dict) -> str:
    """``pmd_cores=2,flows=1000``: how tables, charts and scenario names show a point."""
    return ",".join(f"{key}={_shown(value)}" for key, value in point.items())


def _shown(value) -> str:
    return json.dumps(value) if isinstance(value, bool) else str(value)


def swept_name(scenario: str, point: dict) -> str:
    """The name of a scenario at one point: ``ovs_pvp@pmd_cores=2``."""
    return f"{scenario}@{point_label(point)}" if point else scenario


def points(axes: list[Axis]) -> list[dict]:
    """Every combination, the first axis changing slowest."""
    if not axes:
        return []
    combos = itertools.product(*(axis.values for axis in axes))
    return [{axis.name: value for axis, value in zip(axes, combo, strict=True)}
            for combo in combos]


def from_section(doc: yaml_lines.LocatedDocument) -> list[Axis]:
    """The axes of a task file's ``sweep:`` section (none when it has none)."""
    section = doc.data.get("sweep") if isinstance(doc.data, dict) else None
    if section is None:
        return []
    if not isinstance(section, dict) or not section:
        raise doc.error(("sweep",), "must map task args to their values, e.g. "
                        "{pmd_cores: [1, 2, 4]}")
    axes = []
    for name, values in section.items():
        def error(message: str, at=("sweep", name)) -> TaskError:
            return doc.error(at, message)

        if not isinstance(name, str) or not NAME.match(name):
            raise error(f"{name!r} is not a task arg name (letters, digits, _)")
        if not isinstance(values, list) or not values:
            raise error(f"must be {ALLOWED}")
        for index, value in enumerate(values):
            _check_value(value, lambda msg, i=index, n=name: doc.error(("sweep", n, i), msg))
        _check_unique(values, error)
        axes.append(Axis(name, tuple(values), error))
    return axes


def from_flags(flags: list[str] | None) -> list[Axis]:
    """The axes of ``--sweep NAME=V1,V2,...``; a value that reads as JSON (a number,
    true, false) is that, anything else is a string (``0x6`` stays ``"0x6"``)."""
    axes: list[Axis] = []
    for flag in flags or []:
        name, sep, text = flag.partition("=")
        name = name.strip()

        def error(message: str, shown=name or flag) -> TaskError:
            return TaskError(message, "--sweep", key_path=shown)

        if not sep or not NAME.match(name):
            raise error(f"{flag!r}: give NAME=VALUE1,VALUE2,... (NAME a task arg: letters, "
                        "digits, _), e.g. --sweep pmd_cores=1,2,4")
        if any(axis.name == name for axis in axes):
            raise error("given twice; give every value in one --sweep")
        items = [item.strip() for item in text.split(",")]
        if not text.strip() or any(not item for item in items):
            raise error(f"{text!r}: an empty value; give NAME=VALUE1,VALUE2,...")
        values = [_flag_value(item) for item in items]
        for value in values:
            _check_value(value, error)
        _check_unique(values, error)
        axes.append(Axis(name, tuple(values), error))
    return axes


def _flag_value(text: str):
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (bool, int, float)) else text


def _check_value(value, error: Callable[[str], TaskError]) -> None:
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        raise error(f"{value} is not a value nsb can use; give a finite number")
    if not isinstance(value, (bool, int, float, str)):
        raise error(f"{json.dumps(value, default=str)} is not a value to sweep; "
                    f"allowed: {ALLOWED}")
    if isinstance(value, str) and (not value or any(not c.isprintable() for c in value)):
        raise error(f"{value!r}: a value must be one line of printable text")


def _check_unique(values: list, error: Callable[[str], TaskError]) -> None:
    """Values that look alike (1 and "1") would name two points alike."""
    seen: set = set()
    for value in values:
        if _shown(value) in seen:
            raise error(f"{_shown(value)} is listed twice; each value once")
        seen.add(_shown(value))


def combine(section: list[Axis], flags: list[Axis], task_args: dict,
            args_source: str) -> list[Axis]:
    """The file's axes, with ``--sweep`` replacing an axis of the same name and adding
    new ones; a task arg given with --task-args pins a file axis (it is not swept),
    and naming one both in --task-args and --sweep is an error."""
    for axis in flags:
        if axis.name in task_args:
            raise axis.error(f"also given in {args_source}; sweep it or set it, not both")
    by_name = {axis.name: axis for axis in section if axis.name not in task_args}
    for axis in flags:
        by_name[axis.name] = axis
    axes = list(by_name.values())
    count = 1
    for axis in axes:
        count *= len(axis.values)
    if count > MAX_POINTS:
        raise axes[-1].error(f"{count} combinations; at most {MAX_POINTS} (each runs the "
                             "whole task)")
    return axes


def merge(tasks: list[Task], point_list: list[dict], axes: list[Axis]) -> Task:
    """One task whose scenarios are those of every point, in point order; the points
    may change scenarios (VNF options, profiles), not the context or the outputs."""
    first = tasks[0]
    for task, point in zip(tasks[1:], point_list[1:], strict=True):
        for what, mine, theirs in (("context", _ctx(first), _ctx(task)),
                                   ("outputs", _outs(first), _outs(task))):
            if mine != theirs:
                changed = [a for a in axes if point[a.name] != point_list[0][a.name]]
                raise changed[0].error(
                    f"at {point_label(point)} the task's {what} differs from the one at "
                    f"{point_label(point_list[0])}; a sweep may change the scenarios (VNF "
                    f"options, traffic profile), not the {what}, which one task deploys once")
    scenarios = tuple(replace(spec, name=swept_name(spec.name, point), sweep=dict(point))
                      for task, point in zip(tasks, point_list, strict=True)
                      for spec in task.scenarios)
    return replace(first, scenarios=scenarios, sweep=tuple(point_list))


def _ctx(task: Task) -> list:
    return [(spec.type, render_key(spec.options)) for spec in (task.context,
                                                               *task.more_contexts)]


def _outs(task: Task) -> list:
    return [(spec.type, render_key(spec.options)) for spec in task.outputs]


def render_key(value) -> str:
    """A comparable text of plugin options."""
    return json.dumps(value, sort_keys=True, default=str)


def check_used(axes: list[Axis], used: set) -> None:
    """A swept name no template reads would run the same task several times."""
    for axis in axes:
        if axis.name not in used:
            try:
                render.check_args_used({axis.name: None}, used)
            except TaskError as exc:
                raise axis.error(exc.message) from None


def load(path, task_args: dict, flags: list[str] | None, args_source: str) -> tuple[Task, set]:
    """The task (merged over the sweep's points when there is one) and the names its
    templates read."""
    from nsb.task import input_file, loader
    from nsb.task.documents import read_document

    flag_axes = from_flags(flags)
    try:  # the section before the points are known: an arg a point sets may be undefined
        doc = read_document(input_file.resolve(path), task_args, strict=False)
    except render.TemplateLimitError:
        raise  # once is enough: a second render would take the time and memory again
    except TaskError:
        doc = None  # loading the task (or each point) says what is wrong, strictly
    section = from_section(doc) if doc is not None else []
    axes = combine(section, flag_axes, task_args, args_source)
    with render.names_used() as used:
        if not axes:
            return loader.load(path, task_args), used
        point_list = points(axes)
        tasks = [loader.load(path, {**task_args, **point}) for point in point_list]
    check_used(axes, used)
    return merge(tasks, point_list, axes), used
