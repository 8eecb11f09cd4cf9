"""Jinja2 rendering of task files: sandboxed, strict, errors with the line."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from nsb.errors import TaskError


class DefaultableUndefined(jinja2.StrictUndefined):
    """Strict, except that an undefined name is false: Yardstick's task files give
    defaults with ``{% set x = x or D %}`` (and test ``{% if x %}``), which its
    lenient Jinja2 allows. Printing, iterating or using an undefined name is still
    an error."""

    def __bool__(self) -> bool:
        return False


def render(text: str, file: str, task_args: dict | None = None, strict: bool = True) -> str:
    """Render ``text`` with ``task_args``; an undefined variable is an error when ``strict``.

    NSB's VNF descriptors are rendered leniently (an undefined value is empty),
    as NSB did, because they test ``is defined`` and may name keys a pod lacks.
    """
    undefined = DefaultableUndefined if strict else jinja2.Undefined
    env = SandboxedEnvironment(undefined=undefined, keep_trailing_newline=True)
    try:
        template = env.from_string(text)
        template.filename = file
        return template.render(**(task_args or {}))
    except jinja2.TemplateSyntaxError as exc:
        raise TaskError(f"template error: {exc.message}", file, exc.lineno) from None
    except jinja2.UndefinedError as exc:
        raise TaskError(
            f"template error: {exc.message} (pass it with --task-args or define a default)",
            file, _template_line(exc, file)) from None
    except jinja2.TemplateError as exc:
        raise TaskError(f"template error: {exc}", file, _template_line(exc, file)) from None
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError,
            RecursionError, MemoryError) as exc:  # Python raised inside an expression
        raise TaskError(f"template error: {type(exc).__name__}: {exc}", file,
                        _template_line(exc, file)) from None


def _template_line(exc: BaseException, file: str = "") -> int | None:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename in ("<template>", file):
            return frame.lineno
    return None


def parse_task_args(args_json: str | None, args_file: str | None) -> dict:
    """Merge ``--task-args-file`` (YAML or JSON) and ``--task-args`` (JSON wins)."""
    merged: dict = {}
    if args_file:
        import yaml

        path = Path(args_file)
        try:
            loaded = yaml.safe_load(path.read_text())
        except OSError as exc:
            raise TaskError(f"cannot read task args file: {exc.strerror}", args_file) from None
        except yaml.YAMLError as exc:
            raise TaskError(f"task args file is not valid YAML/JSON: {exc}", args_file) from None
        if loaded is not None and not isinstance(loaded, dict):
            raise TaskError("task args file must hold a mapping", args_file)
        merged.update(loaded or {})
    if args_json:
        try:
            loaded = json.loads(args_json)
        except json.JSONDecodeError as exc:
            raise TaskError(f"--task-args is not valid JSON: {exc.msg} at column {exc.colno}",
                            "--task-args") from None
        if not isinstance(loaded, dict):
            raise TaskError("--task-args must be a JSON object, e.g. '{\"duration_s\": 5}'",
                            "--task-args")
        merged.update(loaded)
    return merged
