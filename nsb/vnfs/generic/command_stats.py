"""A ``command`` VNF's KPIs: what its stats command prints, as numbers by name.

Either JSON (an object, or one object per line; nested objects become
``outer.inner`` names) or lines of
``key value`` (also ``key: value`` and ``key=value``). Values that are not
numbers (text, lists, true/false) are left out; so are lines that are not a key
and one value.
"""

from __future__ import annotations

import json
import math
import re

_LINE = re.compile(r"^\s*([^\s:=]+)\s*[:=]?\s+(\S+)\s*$|^\s*([^\s:=]+)\s*[:=]\s*(\S+)\s*$")


def parse(output: str) -> dict[str, float]:
    text = output.strip()
    if text.startswith("{"):
        found = _json(text)
        if found is not None:
            return found
    kpis: dict[str, float] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        key, value = (match.group(1), match.group(2)) if match.group(1) else \
            (match.group(3), match.group(4))
        number = _number(value)
        if number is not None:
            kpis[key] = number
    return kpis


def _json(text: str) -> dict[str, float] | None:
    """One JSON document, or one per line (a telemetry client answering several
    commands); None when it is not JSON after all."""
    try:
        return _flatten(json.loads(text), "")
    except json.JSONDecodeError:
        pass
    found: dict[str, float] = {}
    for line in filter(None, (line.strip() for line in text.splitlines())):
        try:
            found.update(_flatten(json.loads(line), ""))
        except json.JSONDecodeError:
            return None
    return found


def _flatten(value, prefix: str) -> dict[str, float]:
    if isinstance(value, dict):
        found: dict[str, float] = {}
        for key, inner in value.items():
            found.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return found
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not prefix:
        return {}
    return {prefix: float(value)} if math.isfinite(value) else {}


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
