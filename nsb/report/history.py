"""The run history: every task under the results directory, newest first.

`nsb task list` prints one line per run (when, id, test case, label, status and
the NDR per frame size); `nsb task show ID` one run in full. Task ids start with
their UTC start time, so they sort by time; a unique prefix names a task.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from nsb import frames
from nsb.report.loading import RESULTS_FILE, TaskResults
from nsb.task import input_file
from nsb.units import pps_text


@dataclass(frozen=True)
class RunLine:
    started: float
    task_id: str
    test_case: str
    label: str
    status: str
    ndr: str


def runs(results_dir: Path) -> list[RunLine]:
    """One line per readable results.json under ``results_dir``, newest first; a
    damaged one is listed as such instead of hiding the others."""
    found = []
    for path in Path(results_dir).glob(f"*/{RESULTS_FILE}"):
        try:
            doc = json.loads(input_file.read_text(path, str(path), limit=256 << 20))
            task = doc["task"] if isinstance(doc.get("task"), dict) else {}
        except Exception:  # noqa: BLE001  (a damaged file is a line, not the end of the list)
            found.append(RunLine(path.stat().st_mtime, path.parent.name, "?", "", "unreadable",
                                 ""))
            continue
        found.append(RunLine(
            started=float(task.get("started") or path.stat().st_mtime),
            task_id=str(task.get("id") or path.parent.name),
            test_case=Path(str(task.get("file") or "?")).stem,
            label=str(task.get("label") or ""),
            status=str(task.get("status") or "unknown"),
            ndr=ndr_summary(doc.get("results") if isinstance(doc.get("results"), list) else [])))
    return sorted(found, key=lambda r: (r.started, r.task_id), reverse=True)


def ndr_summary(results: list, shown: int = 2) -> str:
    """``64 B 1.23 Mpps, 1518 B 812 kpps +5`` from the first iteration's results."""
    parts = []
    for result in results:
        if not isinstance(result, dict) or result.get("iteration", 0) not in (0, None):
            continue
        try:
            rate = pps_text(result["throughput_pps"])
            parts.append(f"{frames.shown(result['frame_size'])} {rate}")
        except (KeyError, TypeError, ValueError):
            continue
    more = f" +{len(parts) - shown}" if len(parts) > shown else ""
    return ", ".join(parts[:shown]) + more


def render_list(lines: list[RunLine]) -> str:
    if not lines:
        return "no runs yet\n"
    rows = [("STARTED (UTC)", "TASK ID", "TEST CASE", "LABEL", "STATUS", "NDR")]
    for line in lines:
        when = datetime.datetime.fromtimestamp(line.started, datetime.UTC)
        rows.append((when.strftime("%Y-%m-%d %H:%M"), line.task_id, line.test_case,
                     line.label, line.status, line.ndr))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "".join("  ".join(cell.ljust(width) for cell, width in zip(row[:5], widths,
                                                                        strict=True))
                   + "  " + row[5] + "\n" for row in rows)


def render_show(task: TaskResults) -> str:
    """The task's own record, one ``key: value`` per line, before its summary table."""
    t = task.task
    started = t.get("started")
    when = datetime.datetime.fromtimestamp(started, datetime.UTC).strftime(
        "%Y-%m-%d %H:%M:%S UTC") if isinstance(started, (int, float)) else "?"
    fields = [("task", task.id), ("test case", Path(str(t.get("file") or "?")).stem),
              ("file", t.get("file") or ""), ("label", t.get("label") or ""),
              ("status", task.status), ("started", when),
              ("duration", f"{t['duration_s']:.0f} s" if isinstance(
                  t.get("duration_s"), (int, float)) else ""),
              ("error", t.get("error") or ""),
              ("task args", json.dumps(t.get("args") or {}, sort_keys=True)),
              ("results", str(task.path))]
    return "".join(f"{key + ':':11} {value}\n" for key, value in fields if value != "")
