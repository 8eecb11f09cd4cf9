"""Grafana for nsb: dashboards generated from what nsb measures, pushed or exported.

``dashboards(datasource_uid)`` builds the dashboard JSON models (grafana-foundation-sdk),
``push(url, token, influx)`` creates or updates the InfluxDB data source and the
dashboards through Grafana's HTTP API (urllib3), ``export(directory, influx)``
writes provisioning files instead, and ``register(subparsers)`` adds ``nsb grafana``.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "dashboards": "nsb.grafana.dashboards",
    "Measures": "nsb.grafana.dashboards",
    "InfluxDataSource": "nsb.grafana.datasource",
    "push": "nsb.grafana.api",
    "export": "nsb.grafana.provisioning",
    "register": "nsb.grafana.cli",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    """Import on first use: `nsb --help` must not load the Grafana SDKs."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
