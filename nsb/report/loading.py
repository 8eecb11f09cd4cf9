"""Find and read a task's results (``<results_dir>/<task_id>/results.json``).

Files of earlier nsb versions read as this one writes them (results_format.upgrade).

A task is named by its id (or a unique prefix of it) under the results
directory, or by a path: the task's directory or its results.json.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path

from nsb.errors import TaskError
from nsb.outputs import results_format
from nsb.report import results_shape
from nsb.task import input_file, schema
from nsb.task.yaml_lines import LocatedDocument

RESULTS_FILE = "results.json"  # as written by nsb.outputs.file
MAX_RESULTS_BYTES = 256 << 20

_NUMBER = {"type": "number"}
# frame_size: bytes, or a mix's label (IMIX)
_RECORD = {"type": "object", "required": ["frame_size"],
           "properties": {"frame_size": {"type": ["integer", "string"]},
                          "scenario": {"type": "string"}, "iteration": {"type": "integer"}}}
# what the reports read, with the types nsb.outputs.file writes
RESULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "task": {"type": "object"},
        "plan": {"type": "object"},
        "platform": {"type": "object"},
        "trials": {"type": "array", "items": {**_RECORD, "properties": {
            **_RECORD["properties"], "trial_index": {"type": "integer"},
            "tx_rate_pps": _NUMBER, "rx_rate_pps": _NUMBER, "loss_pct": _NUMBER}}},
        "results": {"type": "array", "items": {
            **_RECORD, "required": ["frame_size", "throughput_pps", "throughput_mbps",
                                    "line_rate_pct"],
            "properties": {**_RECORD["properties"], "throughput_pps": _NUMBER,
                           "throughput_mbps": _NUMBER, "line_rate_pct": _NUMBER,
                           "limited_by": {"type": ["string", "null"]}}}},
        "kpis": {"type": "array", "items": {"type": "object"}},
    },
}


@dataclass
class TaskResults:
    """One task's results document, with the lookups the reports need."""

    path: Path
    task: dict
    plan: dict = field(default_factory=dict)
    platform: dict = field(default_factory=dict)
    trials: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    kpis: list[dict] = field(default_factory=list)
    # a soak's intervals and PLRsearch's estimates after each trial (nsb.report.soak)
    soak_intervals: list[dict] = field(default_factory=list)
    plr_estimates: list[dict] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.task.get("id") or self.path.parent.name)

    @property
    def status(self) -> str:
        return str(self.task.get("status") or "unknown")

    def scenarios(self) -> list[str]:
        """Scenario names in plan order, then any only seen in trials or results."""
        names = [s.get("name", "") for s in self.plan.get("scenarios", [])]
        for record in [*self.results, *self.trials]:
            if record.get("scenario") not in names:
                names.append(record.get("scenario"))
        return names

    def results_of(self, scenario: str) -> list[dict]:
        return [r for r in self.results if r.get("scenario") == scenario]

    def trials_of(self, scenario: str) -> list[dict]:
        return [t for t in self.trials if t.get("scenario") == scenario]

    def kpis_of(self, scenario: str) -> list[dict]:
        return [k for k in self.kpis if k.get("scenario") == scenario]

    def iterations(self, scenario: str) -> list[int]:
        return sorted({r.get("iteration", 0) for r in self.results_of(scenario)})

    def speed_gbps(self, scenario: str) -> float | None:
        """The interface speed the traffic profile assumed for % of line rate."""
        for spec in self.plan.get("scenarios", []):
            if spec.get("name") == scenario:
                speed = (spec.get("traffic_profile") or {}).get("interface_speed_gbps")
                return float(speed) if speed is not None else None
        return None

    def profile_of(self, scenario: str) -> dict:
        for spec in self.plan.get("scenarios", []):
            if spec.get("name") == scenario:
                return spec.get("traffic_profile") or {}
        return {}


def resolve(ref: str, results_dir: str | Path, where: str = "") -> Path:
    """The results.json a task reference names; TaskError saying where it looked."""
    base = Path(results_dir)
    candidate = Path(ref)
    looked = []
    if candidate.is_file():
        return candidate
    if candidate.is_dir() and (candidate / RESULTS_FILE).is_file():
        return candidate / RESULTS_FILE
    if candidate.exists():
        looked.append(str(candidate / RESULTS_FILE))
    source = f" ({where})" if where else ""
    if "/" not in ref and ref not in ("", ".", ".."):
        input_file.check_readable_dir(base, f"the results directory{source}")
        exact = base / ref / RESULTS_FILE
        if exact.is_file():
            return exact
        looked.append(str(exact))
        prefixed = sorted(p.parent.name for p in base.glob(f"{glob.escape(ref)}*/{RESULTS_FILE}"))
        if len(prefixed) == 1:
            return base / prefixed[0] / RESULTS_FILE
        if len(prefixed) > 1:
            raise TaskError(f"task id '{ref}' is ambiguous in {base}: {', '.join(prefixed)}")
    elif not candidate.exists():
        looked.append(str(candidate))
    raise TaskError(f"no results for task '{ref}': looked for {' and '.join(looked)}"
                    f"{source}")


def load(ref: str, results_dir: str | Path, where: str = "") -> TaskResults:
    """Read one task's results.json (also of a task still running or that failed)."""
    path = resolve(ref, results_dir, where)
    text = input_file.read_text(path, str(path), limit=MAX_RESULTS_BYTES)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskError(f"not a results file (invalid JSON at line {exc.lineno}: {exc.msg})",
                        str(path)) from None
    except RecursionError:
        raise TaskError("not a results file (nested too deep)", str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("task"), dict):
        raise TaskError("not an nsb results file (no 'task' object)", str(path))
    if why := results_format.unreadable(doc):
        raise TaskError(why, str(path), key_path="format")
    schema.validate(doc, RESULTS_SCHEMA, LocatedDocument(doc, str(path)))
    results_shape.check(doc, str(path))
    results_format.upgrade(doc)
    return TaskResults(
        path=path, task=doc["task"], plan=doc.get("plan") or {},
        platform=doc.get("platform") or {}, trials=list(doc.get("trials") or []),
        results=list(doc.get("results") or []), kpis=list(doc.get("kpis") or []),
        soak_intervals=_records(doc.get("soak_intervals")),
        plr_estimates=_records(doc.get("plr_estimates")))


def _records(value) -> list[dict]:
    """A list of records, leaving out what is not one (a report shows what it can)."""
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []
