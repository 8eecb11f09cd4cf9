"""The arguments a task's templates read (``nsb task args``), found without
rendering it with any: a user learns them, with their defaults, from the task
file and the files nsb renders with task args (NSB's topology and traffic
profile files), not from an error on a bogus one.

Template internals are left out: names a template sets (``{% set %}``, loop
variables) and the values nsb provides (``machine``, Jinja2's globals, and in
NSB's files ``get``, ``extra_args`` and the scenario's traffic options).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import yaml
from jinja2 import meta, nodes

from nsb.errors import TaskError
from nsb.task import input_file, limits, render, traffic_options

# what nsb renders NSB's topology and traffic profile files with, besides task args
NSB_VALUES = frozenset({"get", "extra_args"})
PROFILE_VALUES = frozenset(traffic_options.template_values()) - {"duration"}


@dataclass
class TaskArg:
    name: str
    default: str = ""  # the template's default as written ("" when it has none)
    optional: bool = False  # read only behind ``is defined``: no default needed
    files: list[str] = field(default_factory=list)

    @property
    def shown_default(self) -> str:
        if self.default:
            return self.default
        return "(optional)" if self.optional else "(required)"


def task_args(path: str | Path) -> list[TaskArg]:
    """Every argument of the task at ``path`` and of the files it has nsb render."""
    path = input_file.resolve(path)
    found: dict[str, TaskArg] = {}
    text = input_file.read_text(path, str(path))
    _read(text, path, frozenset(), found)
    for referenced, provided in _rendered_files(text, path):
        try:
            _read(input_file.read_text(referenced, str(referenced)), referenced, provided,
                  found)
        except TaskError:
            continue  # a file that is not there: validate names it; its args are unknown
    return sorted(found.values(), key=lambda a: a.name)


def _read(text: str, path: Path, provided: frozenset, found: dict) -> None:
    try:
        _read_template(text, path, provided, found)
    except jinja2.TemplateSyntaxError as exc:
        raise TaskError(f"template error: {exc.message}", str(path), exc.lineno) from None
    except RecursionError:
        raise TaskError("template error: nested or recursive too deeply (thousands of nested "
                        "brackets or blocks)", str(path)) from None


def _read_template(text: str, path: Path, provided: frozenset, found: dict) -> None:
    env = limits.LimitedEnvironment()
    parsed = env.parse(text)
    internal = set(env.globals) | {"machine"} | provided
    defaults = _defaults(parsed, text)
    optional = _tested_defined(parsed)
    for name in meta.find_undeclared_variables(parsed) - internal:
        arg = found.setdefault(name, TaskArg(name))
        arg.default = arg.default or defaults.get(name, "")
        arg.optional = arg.optional or name in optional
        arg.files.append(path.name)
        if provided >= PROFILE_VALUES and name == "duration" and not arg.default:
            arg.default = str(traffic_options.DEFAULT_DURATION_S)  # nsb's, as NSB's


def _defaults(parsed: nodes.Template, text: str) -> dict[str, str]:
    """``x | default(D)`` and Yardstick's ``{% set x = x or D %}``: name -> D as written."""
    lines = text.splitlines()
    found = {}
    for node in parsed.find_all(nodes.Filter):
        if node.name == "default" and isinstance(node.node, nodes.Name) and node.args:
            found.setdefault(node.node.name, _written(node.args[0], node.node.name,
                                                      lines, node.lineno))
    for node in parsed.find_all(nodes.Assign):
        value = node.node
        if (isinstance(node.target, nodes.Name) and isinstance(value, nodes.Or)
                and isinstance(value.left, nodes.Name)
                and value.left.name == node.target.name):
            found.setdefault(node.target.name, _const(value.right) or "(computed)")
    return found


def _written(arg: nodes.Expr, name: str, lines: list[str], lineno: int) -> str:
    """The default's source text: a constant as YAML would read it, else the expression."""
    const = _const(arg)
    if const:
        return const
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    match = re.search(rf"\b{re.escape(name)}\s*\|\s*default\s*\(", line)
    if not match:
        return "(computed)"
    depth, start = 1, match.end()
    for index in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0:
            return line[start:index].strip()
    return "(computed)"


def _const(arg: nodes.Expr) -> str:
    try:
        value = arg.as_const()
    except nodes.Impossible:
        return ""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _tested_defined(parsed: nodes.Template) -> set[str]:
    return {node.node.name for node in parsed.find_all(nodes.Test)
            if node.name in ("defined", "undefined") and isinstance(node.node, nodes.Name)}


def _rendered_files(text: str, path: Path) -> list[tuple[Path, frozenset]]:
    """NSB's topology and traffic profile files (and nsb's profile files) the task
    names, as its defaults render it, each with the names nsb provides to it."""
    try:
        data = yaml.safe_load(render.render(text, str(path), {}, strict=False))
    except (TaskError, yaml.YAMLError):
        return []
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        return []
    files = []
    for scenario in data["scenarios"]:
        if not isinstance(scenario, dict):
            continue
        options = scenario.get("options")
        # NSB's scenario duration reaches the profile instead of a task arg's
        timed = {"duration"} if isinstance(options, dict) and "duration" in options else set()
        for key, provided in (("topology", NSB_VALUES),
                              ("traffic_profile", NSB_VALUES | PROFILE_VALUES | timed)):
            name = scenario.get(key)
            if isinstance(name, str) and name and "\0" not in name:
                files.append((input_file.resolve(path.parent / name), provided))
    return list(dict.fromkeys(files))
