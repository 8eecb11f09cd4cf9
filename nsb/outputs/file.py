"""Results as one JSON document (rewritten as results arrive) plus an event log."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path

from nsb import redact
from nsb.errors import RunError
from nsb.events import (
    Event,
    KpiSample,
    PlatformFacts,
    PlrEstimate,
    ResultReady,
    SoakInterval,
    TaskFinished,
    TaskStarted,
    TaskStatus,
    TrialDone,
)
from nsb.outputs import atomic_file, records, results_format
from nsb.outputs.base import Output

LOG = logging.getLogger(__name__)

RESULTS_FILE = "results.json"
EVENTS_FILE = "events.jsonl"


class FileOutput(Output):
    """JSON results file: task, platform facts, every trial, every result, KPIs."""

    essential = True

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"path": {"type": "string", "description": "where results.json goes "
                                "(default <results_dir>/<task_id>/results.json)"}},
    }

    def open(self) -> None:
        self.path = Path(self.options.get("path") or self.run.results_dir / RESULTS_FILE)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.events = open(self.path.parent / EVENTS_FILE, "a")  # noqa: SIM115
        self.document = {
            **results_format.header(),
            "task": {"id": self.run.task_id, "file": str(self.run.task.file),
                     "description": self.run.task.description, "label": self.run.label,
                     "args": redact.values(dict(self.run.task.args)),
                     "started": time.time(), "finished": None, "status": TaskStatus.RUNNING,
                     "error": ""},
            "plan": {}, "platform": {}, "trials": [], "results": [], "kpis": [],
            "soak_intervals": [], "plr_estimates": [],
        }

    def handle(self, event: Event) -> None:
        try:
            self._handle(event)
        except OSError as exc:
            raise RunError(f"cannot write the results in {self.path.parent}: "
                           f"{exc.strerror or exc}; the run stopped, {self.path.name} keeps "
                           "what was written before") from None

    def _handle(self, event: Event) -> None:
        self.events.write(json.dumps(records.record(event), default=str) + "\n")
        self.events.flush()
        doc = self.document
        if isinstance(event, TaskStarted):
            doc["plan"] = event.plan
            self._write()  # "running" from the start: a killed run is found by its status
        elif isinstance(event, PlatformFacts):  # later facts of a node add to the first
            facts = doc["platform"].setdefault(event.node, {})
            for key, value in event.facts.items():
                if isinstance(value, dict) and isinstance(facts.get(key), dict):
                    facts[key] = {**facts[key], **value}
                else:
                    facts[key] = value
        elif isinstance(event, TrialDone):
            doc["trials"].append(records.trial_record(event))
            self._write()  # a trial's worth of lab time is never lost
        elif isinstance(event, KpiSample):
            doc["kpis"].append({"source": event.source, "node": event.node,
                                "scenario": event.scenario, "trial_index": event.trial_index,
                                "timestamp": event.timestamp, "kpis": event.kpis})
        elif isinstance(event, ResultReady):
            doc["results"].append(records.result_record(event))
            self._write()
        elif isinstance(event, SoakInterval):
            doc["soak_intervals"].append(records.soak_record(event))
            self._write()  # every interval of a soak is kept, also when it is stopped
        elif isinstance(event, PlrEstimate):
            doc["plr_estimates"].append(records.plr_record(event))
        elif isinstance(event, TaskFinished):
            doc["task"].update(finished=event.timestamp, status=event.status, error=event.error,
                               duration_s=event.duration_s)
            self._write()

    def _write(self) -> None:
        """Whole or not at all: a full disk leaves the previous version readable."""
        atomic_file.write(self.path, json.dumps(self.document, indent=1, default=str))

    def close(self) -> None:
        try:
            self._write()
        except OSError as exc:
            LOG.error("cannot write %s: %s", self.path, exc.strerror or exc)
        finally:
            with contextlib.suppress(OSError):
                self.events.close()
