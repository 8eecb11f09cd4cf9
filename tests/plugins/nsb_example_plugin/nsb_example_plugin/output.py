"""An output: every judged trial as a line of a CSV file in the task's results."""

from __future__ import annotations

import csv

from nsb.events import Event, TrialDone
from nsb.outputs.base import Output


class CsvOutput(Output):
    """Example output: trials.csv (frame size, rate, sent, received, verdict)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"file": {"type": "string", "default": "trials.csv"}},
    }

    def open(self) -> None:
        self.run.results_dir.mkdir(parents=True, exist_ok=True)
        self.file = open(self.run.results_dir / self.options["file"], "w", newline="")  # noqa: SIM115
        self.writer = csv.writer(self.file)
        self.writer.writerow(["iteration", "frame_size", "rate_pps", "tx", "rx", "verdict"])

    def handle(self, event: Event) -> None:
        if isinstance(event, TrialDone):
            trial = event.result.trial
            self.writer.writerow([event.iteration, trial.frame_size, round(trial.rate_pps),
                                  event.result.tx_packets, event.result.rx_packets,
                                  event.verdict])

    def close(self) -> None:
        self.file.close()
