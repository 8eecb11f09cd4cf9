"""Jinja2 rendering of task files: sandboxed, strict, errors with the line."""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import json
import math
import traceback
from collections.abc import Iterator

import jinja2
from jinja2 import meta

from nsb.errors import TaskError
from nsb.task import input_file, limits, machine, yaml_lines


class TemplateLimitError(TaskError):
    """A template went past a limit (memory, time, output, depth): rendering it again,
    leniently or strictly, would do the same."""


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
    env = limits.LimitedEnvironment(undefined=undefined, keep_trailing_newline=True,
                                    finalize=_as_yaml_value)
    env.globals["machine"] = machine.template_values()
    try:
        parsed = env.parse(text)
        names = _NAMES_USED.get()
        if names is not None:
            names |= meta.find_undeclared_variables(parsed)
        template = env.from_string(parsed)
        template.filename = file
        with limits.bounded(file):
            return limits.join_bounded(
                template.generate(**(values_of(task_args or {}))))
    except limits.TemplateLimit as exc:
        raise TemplateLimitError(f"template error: {exc}", file,
                                 _template_line(exc, file)) from None
    except jinja2.TemplateSyntaxError as exc:
        raise TaskError(f"template error: {exc.message}", file, exc.lineno) from None
    except jinja2.TemplateNotFound as exc:
        raise TaskError(f"template error: a task file is one template; {{% include %}}, "
                        f"{{% import %}} and {{% extends %}} ({exc.name!r}) are not supported",
                        file, _template_line(exc, file)) from None
    except jinja2.UndefinedError as exc:
        raise TaskError(
            f"template error: {exc.message} (pass it with --task-args or define a default)",
            file, _template_line(exc, file)) from None
    except jinja2.TemplateError as exc:
        raise TaskError(f"template error: {exc}", file, _template_line(exc, file)) from None
    except RecursionError as exc:
        raise TemplateLimitError("template error: nested or recursive too deeply (thousands "
                                 "of nested brackets or blocks, or a macro calling itself)",
                                 file, _template_line(exc, file)) from None
    except MemoryError as exc:
        raise TemplateLimitError(f"template error: needs more than the {limits.MEMORY_MB} MB "
                                 "a template may use", file, _template_line(exc, file)) from None
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as exc:
        # Python raised inside an expression
        raise TaskError(f"template error: {type(exc).__name__}: {exc}", file,
                        _template_line(exc, file)) from None


_NAMES_USED: contextvars.ContextVar[set | None] = contextvars.ContextVar("names_used",
                                                                         default=None)


@contextlib.contextmanager
def names_used() -> Iterator[set]:
    """Collect the variable names every template rendered meanwhile reads."""
    names: set = set()
    token = _NAMES_USED.set(names)
    try:
        yield names
    finally:
        _NAMES_USED.reset(token)


# values nsb gives NSB's topology and traffic profile files: never a task arg to suggest
NSB_PROVIDED = frozenset({"get", "extra_args", "range", "machine", "imix", "flow", "uplink",
                          "downlink", "page_object", "simulated_users"})


def check_args_used(task_args: dict, used: set, source: str = "--task-args") -> None:
    """A task arg no template reads would change nothing: one line naming it."""
    for name in sorted(task_args):
        if name not in used:
            known = sorted(n for n in used if n not in NSB_PROVIDED)
            hint = difflib.get_close_matches(name, known, n=1)
            did = f" (did you mean '{hint[0]}'?)" if hint else ""
            listed = ", ".join(known) if known else "none"
            raise TaskError(f"'{name}' is not used by the task's templates{did}; they read: "
                            f"{listed} (`nsb task args FILE` lists them with their defaults)",
                            source)


class ArgText(str):
    """A string that came from task args: it must reach the YAML as one value."""


def values_of(task_args: dict) -> dict:
    """Task args as template values; top-level strings are marked as ArgText."""
    return {key: ArgText(value) if isinstance(value, str) else value
            for key, value in task_args.items()}


def _as_yaml_value(value):
    """What ``{{ x }}`` prints: a task-arg string that YAML would read as more than
    one value (a line break, ``, key:``, brackets, a comment) is printed quoted, so a
    value stays a value; floats are printed so YAML reads them back as floats; None
    is YAML's null ``~``, as Yardstick prints it (``finalize_for_yaml``)."""
    if value is None:
        return "~"
    if isinstance(value, ArgText) and _changes_structure(value):
        return json.dumps(str(value))
    if isinstance(value, float) and math.isfinite(value):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            sign = "" if exponent[0] in "+-" else "+"
            text = f"{mantissa}.0e{sign}{exponent}"  # YAML 1.1 needs the dot and sign
        return text
    return value


_PLAIN_START = set("-?:,[]{}#&*!|>'\"%@`")


def _changes_structure(text: str) -> bool:
    if not text:
        return False
    return (text[0] in _PLAIN_START or text != text.strip() or ": " in text
            or " #" in text or text.endswith(":") or any(c in text for c in ",[]{}")
            or any(not c.isprintable() for c in text))


def _template_line(exc: BaseException, file: str = "") -> int | None:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename in ("<template>", file):
            return frame.lineno
    return None


MAX_ARG_DEPTH = 16


def parse_task_args(args_json: str | None, args_file: str | None) -> dict:
    """Merge ``--task-args-file`` (YAML or JSON) and ``--task-args`` (JSON wins).

    Values are checked here, where they can be named: at most MAX_ARG_DEPTH
    levels, finite numbers, one-line printable strings.
    """
    merged: dict = {}
    if args_file:
        doc = yaml_lines.parse(input_file.read_text(args_file, args_file), args_file)
        if doc.data is not None and not isinstance(doc.data, dict):
            raise TaskError("a task args file must hold a mapping of names to values",
                            args_file, 1)
        for key, value in (doc.data or {}).items():
            _check_value(value, (key,), lambda path, msg: doc.error(path, msg))
        merged.update(doc.data or {})
    if args_json:
        loaded = _parse_json_args(args_json)
        for key, value in loaded.items():
            _check_value(value, (key,), _args_error)
        merged.update(loaded)
    return merged


def _args_error(path: tuple, message: str) -> TaskError:
    return TaskError(message, "--task-args", key_path=yaml_lines.format_path(path))


def _parse_json_args(text: str) -> dict:
    def no_constant(name: str):
        raise TaskError(f"{name} is not a number nsb can use; give a finite number",
                        "--task-args")

    def small_int(digits: str) -> int:
        if len(digits.lstrip("-")) > yaml_lines.MAX_INT_DIGITS:
            raise TaskError(f"an integer of {len(digits)} digits; at most "
                            f"{yaml_lines.MAX_INT_DIGITS} are accepted", "--task-args")
        return int(digits)

    try:
        loaded = json.loads(text, parse_constant=no_constant, parse_int=small_int)
    except json.JSONDecodeError as exc:
        raise TaskError(f"not valid JSON: {exc.msg} at column {exc.colno}",
                        "--task-args") from None
    except RecursionError:
        raise TaskError(f"nested too deep; at most {MAX_ARG_DEPTH} levels",
                        "--task-args") from None
    if not isinstance(loaded, dict):
        raise TaskError("must be a JSON object, e.g. '{\"duration_s\": 5}'",
                        "--task-args")
    return loaded


def _check_value(value, path: tuple, error) -> None:
    if len(path) > MAX_ARG_DEPTH:
        raise error(path, f"nested more than {MAX_ARG_DEPTH} levels deep")
    if isinstance(value, float) and not math.isfinite(value):
        raise error(path, f"{value} is not a number nsb can use; give a finite number")
    if isinstance(value, str):
        bad = next((c for c in value if not c.isprintable()), None)
        if bad is not None:
            what = "a line break" if bad in "\r\n" else f"the character {bad!r}"
            raise error(path, f"a value must be one line of printable text; it holds {what}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_value(item, path + (key,), error)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_value(item, path + (index,), error)
