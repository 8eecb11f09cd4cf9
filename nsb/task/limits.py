"""Limits on what a task file's Jinja2 may compute, so a template cannot hang nsb
or take the machine's memory: the sandbox plus bounds on ranges, repetition,
powers, field widths, render time and output size, and a memory ceiling while
rendering as the last resort.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import resource
import signal
import threading
from collections.abc import Iterable, Iterator

import jinja2
from jinja2 import filters as jinja_filters
from jinja2.sandbox import SandboxedEnvironment

MAX_TEXT = 1 << 20          # characters of one string or items of one list built by a template
MAX_OUTPUT = 2 << 20        # characters a template may render
MAX_RANGE = 100_000         # items of range()
MAX_NUMBER_BITS = 4096      # results of ** and * on integers
RENDER_SECONDS = 3.0        # Yardstick's templates render in milliseconds
MEMORY_MB = 128             # more address space a render may take


class TemplateLimit(jinja2.TemplateRuntimeError):
    """A template went past one of the limits; the message says which."""


def bounded_range(*args: int | float) -> range:
    """range() that takes whole floats too: NSB's templates were written for Python 2,
    where ``vports|int / 2`` is an int (``range(4 / 2)``)."""
    numbers = range(*(int(a) if isinstance(a, float) and a.is_integer() else a
                      for a in args))
    if len(numbers) > MAX_RANGE:
        raise TemplateLimit(f"range() of {len(numbers):,} items; at most {MAX_RANGE:,}")
    return numbers


def _size(value) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple, bytes)) else None


def _bits(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0.0
    return float(max(abs(value), 1).bit_length())


def _check_repeat(left, right) -> None:
    for seq, count in ((left, right), (right, left)):
        size = _size(seq)
        if size is not None and isinstance(count, int) and size * count > MAX_TEXT:
            raise TemplateLimit(f"repeating {size:,} items {count:,} times; the result may "
                                f"hold at most {MAX_TEXT:,}")
    if _bits(left) + _bits(right) > MAX_NUMBER_BITS:
        raise TemplateLimit(f"a product larger than {MAX_NUMBER_BITS} bits")


def _check_power(base, exponent) -> None:
    if isinstance(exponent, (int, float)) and isinstance(base, (int, float)) and \
            abs(base) > 1 and exponent > 0:
        bits = math.log2(abs(base)) * exponent
        if bits > MAX_NUMBER_BITS:
            raise TemplateLimit(f"{base} ** {exponent} is larger than {MAX_NUMBER_BITS} bits")


_WIDE_FIELD = re.compile(r"\d{7,}")  # a width or precision of a million or more


def _check_format(spec) -> None:
    if isinstance(spec, str) and _WIDE_FIELD.search(spec):
        raise TemplateLimit("a format width or precision of a million characters or more")


def _check_width(name: str, args: Iterable, kwargs: dict) -> None:
    for value in [*args, *kwargs.values()]:
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_TEXT:
            raise TemplateLimit(f"{name}() with {value:,}; at most {MAX_TEXT:,}")


def _bounded_filter(name: str, function):
    @functools.wraps(function)  # keeps Jinja's jinja_pass_arg marker
    def bounded(*args, **kwargs):
        _check_width(name, args[1:], kwargs)
        if name == "format" and args:
            _check_format(args[0])
        return function(*args, **kwargs)
    return bounded


class LimitedEnvironment(SandboxedEnvironment):
    """SandboxedEnvironment with bounds on everything that can grow without end."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def __init__(self, **options):
        options.setdefault("loader", jinja2.DictLoader({}))  # include/import: not found
        super().__init__(**options)
        self.globals.pop("lipsum", None)
        self.globals["range"] = bounded_range
        for name in ("center", "indent", "wordwrap", "format", "truncate", "batch", "slice"):
            self.filters[name] = _bounded_filter(name, getattr(jinja_filters, f"do_{name}"))
        self.filters["replace"] = _bounded_replace

    def call_binop(self, context, operator, left, right):
        if operator == "*":
            _check_repeat(left, right)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "%":
            _check_format(left)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805  (Jinja's signature)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, (str, list, bytes, tuple)):
            name = getattr(__obj, "__name__", "method")
            _check_width(name, args, kwargs)
            if name in ("format", "format_map"):
                _check_format(owner)
            if name == "replace" and len(args) >= 2:
                _check_replace(owner, args[0], args[1])
        return super().call(__context, __obj, *args, **kwargs)


def _check_replace(text, old, new) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        count = text.count(old) if old else len(text) + 1
        if len(text) + count * len(new) > MAX_TEXT:
            raise TemplateLimit(f"replace() would build more than {MAX_TEXT:,} characters")


@jinja2.pass_eval_context
def _bounded_replace(eval_ctx, value, old, new, count=None):
    _check_replace(str(value), str(old), str(new))
    return jinja_filters.do_replace(eval_ctx, value, old, new, count)


def join_bounded(parts: Iterator[str]) -> str:
    out: list[str] = []
    total = 0
    for part in parts:
        total += len(part)
        if total > MAX_OUTPUT:
            raise TemplateLimit(f"renders more than {MAX_OUTPUT:,} characters")
        out.append(part)
    return "".join(out)


@contextlib.contextmanager
def bounded(file: str) -> Iterator[None]:
    """Stop a render after RENDER_SECONDS and cap the memory it may add."""
    with _memory_ceiling(), _deadline():
        yield


@contextlib.contextmanager
def _deadline() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; the other limits still hold
        return

    def expire(signum, frame):
        raise TemplateLimit(f"took longer than {RENDER_SECONDS:g} s to render")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, RENDER_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _memory_ceiling() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        yield
        return
    ceiling = in_use + (MEMORY_MB << 20)
    if soft != resource.RLIM_INFINITY and soft <= ceiling:
        yield
        return
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
