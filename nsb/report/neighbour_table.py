"""Noisy-neighbour answers (the ``noisy_neighbour`` profile) in the summary: per frame
size what ran where, the receive rate without and with it, the drop and the runs' own
spread, and the p99 latency of each."""

from __future__ import annotations

HEADERS = ["Frame (B)", "Neighbour", "Without (pps)", "With (pps)", "Drop (%)",
           "Spread (%)", "p99 without / with (us)"]


def is_neighbour(result: dict) -> bool:
    return isinstance(result.get("neighbour"), dict)


def _rate(summary: dict) -> str:
    return f"{summary.get('mean_pps', 0):,.0f} ± {summary.get('stdev_pps', 0):,.0f}"


def _where(ran: dict) -> str:
    return (f"{ran.get('stressor', '?')} x{ran.get('workers', '?')} on CPU "
            f"{ran.get('cpus', '?')} of {ran.get('node', '?')}")


def _us(value) -> str:
    return "-" if value is None else f"{value:,.1f}"


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for result in results:
        n = result["neighbour"]
        drop = "none (within spread)" if n.get("within_spread") else f"{n['drop_pct']:.2f}"
        out.append([str(result.get("frame_size", "-")), _where(n.get("ran") or {}),
                    _rate(n["without"]), _rate(n["with"]), drop, f"{n['spread_pct']:.2f}",
                    f"{_us(n.get('p99_us_without'))} / {_us(n.get('p99_us_with'))}"])
    return out
