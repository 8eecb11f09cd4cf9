"""Suite files: several task files with their task args, run as one
(``nsb task start --suite``).

Yardstick's format (``schema: "yardstick:suite:0.1"``): ``name``, ``test_cases_dir``
and ``test_cases``, each a ``file_name`` with an optional ``constraint`` (``pod``,
``installer``: the case runs only where the environment's NODE_NAME and
INSTALLER_TYPE are among them), ``task_args`` and ``task_args_fnames`` keyed by pod
(NODE_NAME, else ``default``), the args as a YAML or JSON string. nsb's own form
(``schema: "nsb:suite:0.1"``) gives each case its ``task_args`` as a mapping, a
``task_args_file`` and a ``name``, and may say ``stop_on_failure``. A case without a
name is named after its file; a file listed more than once runs each time, named
apart by its task args.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from nsb.task import input_file, schema, yaml_lines
from nsb.task.documents import read_document

SCHEMAS = ("yardstick:suite:0.1", "nsb:suite:0.1")

_CASE = {
    "type": "object",
    "required": ["file_name"],
    "additionalProperties": False,
    "properties": {
        "file_name": {"type": "string", "minLength": 1},
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
        # nsb: a mapping; Yardstick: per pod (or 'default') a YAML/JSON string
        "task_args": {"type": "object"},
        "task_args_file": {"type": "string", "minLength": 1},
        # nsb: the case's own SLA checks (as --sla), beside those given for every case
        "sla": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "task_args_fnames": {"type": "object",
                             "additionalProperties": {"type": "string"}},
        "constraint": {"type": "object", "additionalProperties": False,
                       "properties": {"pod": {"type": ["string", "array"]},
                                      "installer": {"type": ["string", "array"]}}},
    },
}

SUITE_SCHEMA = {
    "type": "object",
    "required": ["schema", "test_cases"],
    "additionalProperties": False,
    "properties": {
        "schema": {"enum": list(SCHEMAS)},
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "test_cases_dir": {"type": "string"},
        "stop_on_failure": {"type": "boolean"},
        "test_cases": {"type": "array", "minItems": 1, "items": _CASE},
    },
}


@dataclass(frozen=True)
class Case:
    """One task of a suite: its file, args and where the suite names it."""

    name: str
    file: Path
    task_args: dict
    task_args_file: str | None
    where: tuple  # the case's key path in the suite file (for errors)
    skipped: str = ""  # why the environment rules it out ('' when it runs)
    slas: tuple = ()  # its own SLA checks (nsb.sla.Sla)


@dataclass(frozen=True)
class Suite:
    name: str
    file: Path
    cases: tuple[Case, ...]
    stop_on_failure: bool = False
    doc: object = field(default=None, repr=False, compare=False)  # LocatedDocument

    def error(self, case: Case, message: str, *key):
        return self.doc.error(case.where + key, message)


def load(path: str | Path) -> Suite:
    """The suite, every case's file resolved and its args parsed (not yet its task)."""
    path = input_file.resolve(path)
    doc = read_document(path, {}, strict=False)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a suite file must be a YAML mapping")
    if doc.data.get("schema") not in SCHEMAS:
        raise doc.error(("schema",), f"unknown suite schema {doc.data.get('schema')!r}; "
                        f"allowed: {', '.join(repr(s) for s in SCHEMAS)}")
    schema.validate(doc.data, SUITE_SCHEMA, doc)
    data = doc.data
    folder = path.parent / data.get("test_cases_dir", "")
    cases = [_case(doc, ("test_cases", index), raw, folder, data["schema"])
             for index, raw in enumerate(data["test_cases"])]
    cases = _named_apart(cases, [raw.get("name") is not None for raw in data["test_cases"]])
    names: set[str] = set()
    for case in cases:
        if case.name in names:
            raise doc.error(case.where, f"two cases named {case.name!r}: give each its own "
                            "name")
        names.add(case.name)
    return Suite(name=data.get("name", path.stem), file=path, cases=tuple(cases),
                 stop_on_failure=data.get("stop_on_failure", False), doc=doc)


def _named_apart(cases: list[Case], named: list[bool]) -> list[Case]:
    """A task file listed more than once runs once per listing, as in Yardstick: the
    cases named after it are told apart by the task args that differ
    (``tc_x[duration_s=2]``), and those alike by their place among them (``tc_x#2``).
    Names the suite gives stay as given."""
    given = {case.name for case, has in zip(cases, named, strict=True) if has}
    by_name: dict[str, list[int]] = {}
    for index, (case, has) in enumerate(zip(cases, named, strict=True)):
        if not has:
            by_name.setdefault(case.name, []).append(index)
    renamed = list(cases)
    for name, indices in by_name.items():
        if len(indices) == 1 and name not in given:
            continue
        suffixes = _args_apart([cases[i].task_args for i in indices])
        alike = Counter(suffixes) + Counter([""] if name in given else [])
        place: Counter = Counter()
        for index, suffix in zip(indices, suffixes, strict=True):
            if alike[suffix] > 1:
                place[suffix] += 1
                suffix += f"#{place[suffix]}"
            renamed[index] = replace(cases[index], name=name + suffix)
    return renamed


def _args_apart(args: list[dict]) -> list[str]:
    """Per case, the task args whose values are not the same in every case, as
    ``[key=value,...]`` ('' for a case that sets none of them)."""
    keys = sorted({key for one in args for key in one}, key=str)
    differing = [key for key in keys
                 if len({json.dumps(one.get(key), sort_keys=True, default=str)
                         for one in args}) > 1]
    suffixes = []
    for one in args:
        shown = [f"{key}={_shown(one[key])}" for key in differing if key in one]
        suffixes.append(f"[{','.join(shown)}]" if shown else "")
    return suffixes


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"),
                                                           sort_keys=True, default=str)


def _case(doc: yaml_lines.LocatedDocument, at: tuple, raw: dict, folder: Path,
          kind: str) -> Case:
    file = (folder / raw["file_name"]).resolve()
    if not file.is_file():
        raise doc.error(at + ("file_name",), f"no task file {file} (file_name is relative "
                        "to the suite's test_cases_dir, itself relative to the suite file)")
    pod = os.environ.get("NODE_NAME")
    args, args_file = raw.get("task_args", {}), raw.get("task_args_file")
    if kind == "yardstick:suite:0.1":
        args = _yardstick_args(doc, at, args, pod)
        per_pod = raw.get("task_args_fnames") or {}
        args_file = per_pod.get(pod) if pod else None
    if args_file:
        args_file = str(folder / args_file)
    return Case(name=raw.get("name", Path(raw["file_name"]).stem), file=file,
                task_args=args, task_args_file=args_file, where=at,
                skipped=_ruled_out(raw.get("constraint"), pod),
                slas=tuple(_sla(doc, at + ("sla", i), text)
                           for i, text in enumerate(raw.get("sla", []))))


def _sla(doc, at: tuple, text: str):
    from nsb import sla
    from nsb.errors import TaskError

    try:
        return sla.parse(text)
    except TaskError as exc:
        raise doc.error(at, exc.message) from None


def _yardstick_args(doc, at: tuple, by_pod: dict, pod: str | None) -> dict:
    """Yardstick's task_args: the pod's (NODE_NAME) string, else 'default''s, parsed."""
    key = pod if pod in by_pod else "default"
    text = by_pod.get(key)
    if text is None:
        return {}
    if isinstance(text, dict):
        return text
    try:
        parsed = yaml.safe_load(str(text))
    except yaml.YAMLError as exc:
        raise doc.error(at + ("task_args", key), f"not YAML or JSON: "
                        f"{str(exc).splitlines()[0]}") from None
    if parsed is not None and not isinstance(parsed, dict):
        raise doc.error(at + ("task_args", key), "task args must be a mapping of names to "
                        f"values, not {type(parsed).__name__}")
    return parsed or {}


def _ruled_out(constraint: dict | None, pod: str | None) -> str:
    """Why Yardstick's constraint rules the case out here ('' when it runs): as in
    Yardstick, a case with a constraint runs only where NODE_NAME and INSTALLER_TYPE
    are both set, each among those the constraint lists (if it lists any)."""
    if not constraint:
        return ""
    installer = os.environ.get("INSTALLER_TYPE")
    for key, value, env in (("pod", pod, "NODE_NAME"),
                            ("installer", installer, "INSTALLER_TYPE")):
        allowed = constraint.get(key)
        allowed = [allowed] if isinstance(allowed, str) else allowed or []
        if value is None:
            return f"constraint: {env} is unset"
        if allowed and value not in allowed:
            return f"constraint {key}: {', '.join(allowed)} ({env} is {value})"
    return ""
