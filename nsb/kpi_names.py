"""One name per KPI in results.json, CSV, InfluxDB, Grafana, reports and SLAs.

A percentile's point becomes an underscore (``p99.9`` -> ``p99_9``), so the same
name needs no quoting in InfluxQL, Flux, CSV headers or shell arguments:
results.json's ``latency.p99_9_us`` is the CSV column and InfluxDB field
``latency_p99_9_us`` and the SLA metric of that name. Results files written
before keep reading: their ``p99.9_us`` keys are renamed when loaded.
"""

from __future__ import annotations

import re

_DOTTED = re.compile(r"^(p[0-9]+)\.([0-9]+)")


def stat(key: str) -> str:
    """A latency statistic as it is named: ``p99.9`` -> ``p99_9``, ``p99.9_us`` ->
    ``p99_9_us``; other keys unchanged."""
    return _DOTTED.sub(r"\1_\2", str(key))


def percentile(point: float) -> str:
    """The statistic of a percentile: 99.9 -> ``p99_9``."""
    return stat(f"p{point:g}")


def latency_record(latency: dict | None) -> dict | None:
    """A latency record (results.json) with its keys as named now."""
    if not isinstance(latency, dict):
        return latency
    return {stat(key): value for key, value in latency.items()}
