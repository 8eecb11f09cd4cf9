"""InfluxDB output: every trial, result, KPI sample and platform fact set as a point.

Schema in docs/reference/influxdb.md (measurements ``nsb_*``, tags task_id, testcase,
scenario, frame_size, node, vnf, port, direction, verdict...). Writing happens
on a background thread (nsb.outputs.influxdb.writer): ``handle`` only turns the
event into line protocol and queues it. What InfluxDB does not take in time is
spooled to ``<results_dir>/influxdb.spool.lp`` for ``nsb results push``.

Settings come from what nsb.conf ``[influxdb]`` sets (``CONF_OPTS``), overridden by
the task's options; the run hands the nsb.conf values over (``Output.conf_defaults``).
"""

from __future__ import annotations

import logging
import threading

from nsb.errors import NsbError
from nsb.events import Event
from nsb.outputs.base import Output
from nsb.outputs.influxdb import settings as influx_settings
from nsb.outputs.influxdb.points import PointBuilder
from nsb.outputs.influxdb.spool import Spool
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec

LOG = logging.getLogger(__name__)


class InfluxDbOutput(Output):
    """InfluxDB (v2 API, or v1 for InfluxDB 1.x): trials, results, KPIs; spools when down."""

    OPTIONS_SCHEMA = influx_settings.options_schema()
    CONF_OPTS = tuple(influx_settings.OPTS)

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        super().__init__(spec, options, run)
        try:
            self.settings = influx_settings.resolve(options, self.conf_defaults)
        except ValueError as exc:
            key, message = exc.args
            if key in options:
                raise spec.options_where.error(message, key) from None
            raise NsbError(f"nsb.conf [influxdb] {key}: {message}") from None
        self.settings_from = influx_settings.origins(options, self.conf_defaults)
        self.writer = None
        self._lock = threading.Lock()  # NFVi samples arrive from the sampler's thread

    def describe(self) -> dict:
        """The settings (secrets masked) and which of them the task, the environment
        and nsb.conf set: a database that was meant to come from nsb.conf shows."""
        return {"type": self.spec.type, **self.settings.public(),
                "settings_from": self.settings_from}

    def open(self) -> None:
        from nsb import redact
        from nsb.outputs.influxdb.client import make_sender
        from nsb.outputs.influxdb.writer import BackgroundWriter

        self.builder = PointBuilder.for_task_file(
            self.run.task_id, self.run.task.file, self.settings.tags,
            redact.values(dict(self.run.task.args)))
        self.spool = Spool(self.run.results_dir)
        self.writer = BackgroundWriter(make_sender, self.settings, self.spool, self.run.task_id)
        self.writer.start()
        LOG.info("writing points to InfluxDB at %s", self.settings.target)

    def handle(self, event: Event) -> None:
        with self._lock:
            lines = [point.line() for point in self.builder.points(event)]
            self.writer.put(lines)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every point so far is written, spooled or rejected (tests, close)."""
        return self.writer.flush(timeout)

    @property
    def sent_points(self) -> int:
        return self.writer.sent_points if self.writer else 0

    @property
    def spooled_points(self) -> int:
        return self.writer.spooled_points if self.writer else 0

    @property
    def rejected_points(self) -> int:
        return self.writer.rejected_points if self.writer else 0

    def close(self) -> None:
        if self.writer is None:
            return
        self.writer.close()
        LOG.info("InfluxDB: %d points written to %s, %d spooled, %d rejected",
                 self.sent_points, self.settings.target, self.spooled_points,
                 self.rejected_points)
        if self.spooled_points:
            LOG.warning("%d InfluxDB points are spooled in %s: 'nsb results push %s' sends "
                        "them once %s is reachable", self.spooled_points, self.spool.path,
                        self.run.task_id, self.settings.url)
