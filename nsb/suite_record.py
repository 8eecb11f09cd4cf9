"""What a suite run keeps: its id, its cases in order with each case's task id, status,
exit code and answers, written after every case (an interrupted suite keeps what
finished) under ``<results_dir>/suites/<suite_id>.json``; and its JUnit XML."""

from __future__ import annotations

import glob
import json
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nsb.errors import NsbError

SUITES = "suites"


@dataclass
class CaseRun:
    name: str
    file: str
    task_args: dict
    status: str  # ok, error, interrupted, sla_missed, sla_not_comparable, skipped
    task_id: str = ""
    exit_code: int = 0
    error: str = ""
    # per frame size the first scenario's answer: frame_size, throughput_pps, limited_by
    answers: list = field(default_factory=list)
    sla: list = field(default_factory=list)  # {check, passed, comparable, message}


@dataclass
class SuiteRun:
    suite_id: str
    name: str
    file: str
    started: float = field(default_factory=time.time)
    cases: list[CaseRun] = field(default_factory=list)
    status: str = "running"

    def save(self, results_dir: Path) -> Path:
        folder = Path(results_dir) / SUITES
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.suite_id}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1) + "\n")
        tmp.replace(path)  # a reader never sees half a record
        return path

    @property
    def exit_code(self) -> int:
        """The first failed case's exit code (0 when every case that ran passed)."""
        return next((c.exit_code for c in self.cases if c.exit_code), 0)


def load(results_dir: Path, ref: str) -> SuiteRun:
    """A suite run by its id or a unique prefix of one."""
    folder = Path(results_dir) / SUITES
    found = sorted(folder.glob(f"{glob.escape(ref)}*.json")) \
        if folder.is_dir() and ref and "/" not in ref else []
    if len(found) != 1:
        known = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
        what = "no suite run" if not found else f"{len(found)} suite runs"
        raise NsbError(f"{what} with id {ref!r} under {folder} (known: "
                       f"{', '.join(known[-5:]) or 'none'})")
    data = json.loads(found[0].read_text())
    data["cases"] = [CaseRun(**c) for c in data.get("cases", [])]
    return SuiteRun(**data)


def exists(results_dir: Path, ref: str) -> bool:
    """Whether ``ref`` (an id or a unique prefix; a path never is) names a suite run."""
    folder = Path(results_dir) / SUITES
    try:
        if not ref or "/" in ref or ref in (".", "..") or not folder.is_dir():
            return False
    except OSError:  # an unreadable results_dir: looking the task up says so
        return False
    return len(list(folder.glob(f"{glob.escape(ref)}*.json"))) == 1


def junit(run: SuiteRun) -> str:
    """One testsuite: a testcase per task (an error when it did not finish, skipped
    when the environment ruled it out) and one per SLA check of each."""
    suite = ET.Element("testsuite", name=f"nsb suite {run.name} {run.suite_id}")
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    for case in run.cases:
        test = ET.SubElement(suite, "testcase", classname=run.name, name=case.name)
        if case.task_id:
            ET.SubElement(ET.SubElement(test, "properties"), "property", name="task_id",
                          value=case.task_id)
        if case.status == "skipped":
            ET.SubElement(test, "skipped", message=case.error)
            counts["skipped"] += 1
        elif case.status not in ("ok", "sla_missed", "sla_not_comparable"):
            ET.SubElement(test, "error", message=f"status {case.status}").text = case.error
            counts["errors"] += 1
        for check in case.sla:
            sla_case = ET.SubElement(suite, "testcase", classname=f"{run.name}.{case.name}",
                                     name=check["check"])
            if not check["comparable"]:
                ET.SubElement(sla_case, "skipped", message=check["message"])
                counts["skipped"] += 1
            elif not check["passed"]:
                ET.SubElement(sla_case, "failure", message=check["message"]).text = \
                    check["message"]
                counts["failures"] += 1
    suite.set("tests", str(len(suite)))
    for key, value in counts.items():
        suite.set(key, str(value))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def table_rows(run: SuiteRun) -> list[list[str]]:
    """Per case: name, task id, status, its answers per frame size, its SLA checks."""
    rows = []
    for case in run.cases:
        answers = ", ".join(f"{a['frame_size']} B: {a['throughput_pps']:,.0f} pps"
                            f" ({a['limited_by']})" for a in case.answers) or "-"
        sla = f"{sum(c['passed'] for c in case.sla)}/{len(case.sla)} met" if case.sla else "-"
        status = case.status + (f" (exit {case.exit_code})" if case.exit_code else "")
        rows.append([case.name, case.task_id or "-", status, answers, sla])
    return rows


HEADERS = ["Case", "Task", "Status", "Answer per frame size", "SLA"]
