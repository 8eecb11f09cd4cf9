"""InfluxQL statements written from names: the dashboards' queries and the trend's
reads build them the same way, every identifier quoted."""

from __future__ import annotations


def ident(name: str) -> str:
    """A quoted InfluxQL identifier (names such as latency_p99.9_us need the quotes)."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def select(measurement: str, columns: list[tuple[str, str]], where: list[str],
           group_by: list[str] = (), time_filter: bool = False, interval: bool = False) -> str:
    """``SELECT expr AS "name", ... FROM measurement WHERE ... GROUP BY ...``.

    ``columns`` are (expression, alias) pairs; ``group_by`` are tag keys (``*``: all); with
    ``interval`` the points are averaged per ``$__interval`` (``fill(none)``).
    """
    parts = ", ".join(f"{expr} AS {ident(alias)}" if alias else expr for expr, alias in columns)
    conditions = list(where) + (["$timeFilter"] if time_filter else [])
    text = f"SELECT {parts} FROM {ident(measurement)} WHERE {' AND '.join(conditions)}"
    groups = (["time($__interval)"] if interval else []) + [tag if tag == "*" else ident(tag)
                                                            for tag in group_by]
    if groups:
        text += " GROUP BY " + ", ".join(groups)
    if interval:
        text += " fill(none)"
    return text
