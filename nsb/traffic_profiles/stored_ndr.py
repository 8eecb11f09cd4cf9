"""A rate from an earlier run: a share of the NDR a stored task found per frame size."""

from __future__ import annotations

from pathlib import Path

from nsb import frames
from nsb.errors import TaskError
from nsb.frames import Frame
from nsb.report import loading
from nsb.task.model import Where


def ndr_rates(where: Where, ref: str, results_root: Path, scenario: str | None,
              sizes: list[Frame]) -> dict[Frame, float]:
    """Per frame size the NDR (pps) of task ``ref`` under ``results_root`` (its first
    iteration; its scenario ``scenario`` when given); a located error when missing."""
    try:
        task = loading.load(ref, results_root)
    except TaskError as exc:
        raise where.error(exc.message, "ndr_task") from None
    scenarios = task.scenarios()
    if scenario is not None and scenario not in scenarios:
        raise where.error(f"task {task.id} has no scenario '{scenario}'; it has: "
                          f"{', '.join(scenarios) or 'none'}", "ndr_scenario")
    found: dict[str, float] = {}
    for record in task.results:
        if scenario is not None and record.get("scenario") != scenario:
            continue
        if record.get("iteration", 0) not in (0, None) or record.get("throughput_pps", 0) <= 0:
            continue
        found.setdefault(frames.shown(record.get("frame_size")), float(record["throughput_pps"]))
    rates = {}
    for size in sizes:
        key = frames.shown(size.label if isinstance(size, frames.FrameMix) else size)
        if key not in found:
            raise where.error(f"task {task.id} has no NDR above 0 for {key}; it has: "
                              f"{', '.join(found) or 'none'}", "ndr_task")
        rates[size] = found[key]
    return rates
