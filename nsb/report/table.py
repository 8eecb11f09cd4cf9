"""The summary table the NFVi performance reports print, one row per frame size."""

from __future__ import annotations

HEADERS = ["Frame (B)", "Throughput (pps)", "Mbps", "% line rate", "Loss at NDR (%)",
           "Latency min / avg / max (us)", "p50 / p99 / p99.9 (us)", "Limited by"]


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def rows(results: list[dict]) -> list[list[str]]:
    """Result records (see outputs.records.result_record) as table cells."""
    out = []
    for r in results:
        lat = r.get("latency") or {}
        out.append([
            str(r["frame_size"]),
            f"{r['throughput_pps']:,.0f}",
            _num(r["throughput_mbps"]),
            _num(r["line_rate_pct"], 2),
            f"{r['loss_pct']:.4f}",
            " / ".join(_num(lat.get(k)) for k in ("min_us", "avg_us", "max_us")) if lat else "-",
            " / ".join(_num(lat.get(k)) for k in ("p50_us", "p99_us", "p99.9_us")) if lat else "-",
            r["limited_by"],
        ])
    return out


def render(results: list[dict], title: str = "") -> object:
    """A rich Table (printed by the CLI)."""
    from rich.table import Table

    table = Table(title=title or None, show_lines=False)
    for index, header in enumerate(HEADERS):
        table.add_column(header, justify="left" if index == len(HEADERS) - 1 else "right")
    for row in rows(results):
        table.add_row(*row)
    return table
