"""The InfluxDB output's background writer: batches, retries with backoff, spools.

``put`` only appends to a queue, so a trial never waits for the network. A
thread takes up to ``batch_size`` lines (or what came within
``flush_interval_s``) and writes them. A transient failure is retried after
``retry_interval_s``, then ``exponential_base`` times longer each time (at most
``max_retry_interval_s``), until ``max_retry_time_s`` has passed; then the batch
is spooled to disk and so is everything after it, except that one batch every
``max_retry_interval_s`` tries the server again and, when it answers, writing
resumes. A refused token or a missing bucket or database spools at once (the
user must act); a batch refused as bad data goes to ``influxdb.rejected.lp``.
A line is either acknowledged by the server or spooled, never both.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterator

from nsb.outputs.influxdb.client import Sender, SendError
from nsb.outputs.influxdb.settings import InfluxSettings
from nsb.outputs.influxdb.spool import Spool

LOG = logging.getLogger(__name__)

LIVE, SPOOLING = "live", "spooling"


def retry_delays(settings: InfluxSettings) -> Iterator[float]:
    """Seconds to wait before each retry: exponential, capped, endless."""
    delay = settings.retry_interval_s
    while True:
        yield min(delay, settings.max_retry_interval_s)
        delay *= settings.exponential_base


def send_with_retry(sender: Sender, lines: list[str], settings: InfluxSettings,
                    stop: threading.Event | None = None,
                    on_retry: Callable[[SendError, float], None] | None = None) -> None:
    """Send, retrying transient failures for up to max_retry_time_s; raise the last SendError.

    Retries end early (the error is raised) once ``stop`` is set.
    """
    stop = stop or threading.Event()
    started = time.monotonic()
    delays = retry_delays(settings)
    while True:
        try:
            sender.send(lines)
            return
        except SendError as exc:
            if exc.kind != "transient":
                raise
            remaining = settings.max_retry_time_s - (time.monotonic() - started)
            if remaining <= 0 or stop.is_set():
                raise
            delay = min(next(delays), remaining)
            if on_retry is not None:
                on_retry(exc, delay)
            if stop.wait(delay):
                raise


class BackgroundWriter:
    def __init__(self, sender_factory: Callable[[InfluxSettings], Sender],
                 settings: InfluxSettings, spool: Spool, task_id: str = ""):
        self.sender_factory = sender_factory
        self.settings = settings
        self.spool = spool
        self.task_id = task_id
        self.sent_points = 0
        self.spooled_points = 0
        self.rejected_points = 0
        self.state = LIVE
        self._queue: collections.deque[str] = collections.deque()
        self._oldest = 0.0  # monotonic time the oldest queued line arrived
        self._undelivered = 0  # put but neither sent, spooled nor rejected yet
        self._flushing = 0
        self._closing = False
        self._abandon = threading.Event()  # stop retrying: spool the rest now
        self._cond = threading.Condition()
        self._next_probe = 0.0
        self._sender: Sender | None = None
        self._thread = threading.Thread(target=self._run, name="influxdb-writer", daemon=True)

    # ------------------------------------------------------------------ caller side

    def start(self) -> None:
        self._thread.start()

    def put(self, lines: list[str]) -> None:
        """Queue lines for writing; returns at once."""
        if not lines:
            return
        with self._cond:
            if not self._queue:
                self._oldest = time.monotonic()
            self._queue.extend(lines)
            self._undelivered += len(lines)
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every line put so far is sent, spooled or rejected."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: self._undelivered == 0, timeout)
            finally:
                self._flushing -= 1

    def close(self) -> None:
        """Deliver what is queued (retrying as configured), then stop the thread.

        If the wait is interrupted (a signal), the rest is spooled at once.
        """
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        try:
            self._thread.join()
        except BaseException:
            self._abandon.set()
            self._thread.join()
            raise
        finally:
            if self._sender is not None:
                self._sender.close()

    # ------------------------------------------------------------------ thread side

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                deadline = self._oldest + self.settings.flush_interval_s
                while (len(self._queue) < self.settings.batch_size and not self._closing
                       and not self._flushing and (wait := deadline - time.monotonic()) > 0):
                    self._cond.wait(wait)
                count = min(len(self._queue), self.settings.batch_size)
                batch = [self._queue.popleft() for _ in range(count)]
                if self._queue:
                    self._oldest = time.monotonic()
            try:
                self._deliver(batch)
            except Exception:  # never lose a batch to a bug in delivery: keep it on disk
                LOG.exception("InfluxDB writer failed; spooling %d points", len(batch))
                try:
                    self._spool(batch)
                except Exception:
                    LOG.exception("%d InfluxDB points could not be spooled to %s and are lost",
                                  len(batch), self.spool.path)
            finally:
                with self._cond:
                    self._undelivered -= len(batch)
                    self._cond.notify_all()

    def _deliver(self, batch: list[str]) -> None:
        if self._abandon.is_set():
            if self.state == LIVE:
                LOG.warning("interrupted: the InfluxDB points not yet written are spooled to "
                            "%s", self.spool.path)
                self.state = SPOOLING
            self._spool(batch)
            return
        if self.state == SPOOLING and time.monotonic() < self._next_probe:
            self._spool(batch)
            return
        if self._sender is None:
            self._sender = self.sender_factory(self.settings)
        probing = self.state == SPOOLING
        first_failure: list[SendError] = []

        def on_retry(exc: SendError, delay: float) -> None:
            if not first_failure:
                first_failure.append(exc)
                LOG.warning("InfluxDB write to %s failed (%s); retrying for up to %g s before "
                            "spooling", self.settings.target, exc,
                            self.settings.max_retry_time_s)
            else:
                LOG.debug("InfluxDB write failed again (%s); next try in %.2f s", exc, delay)

        try:
            if probing:
                self._sender.send(batch)
            else:
                send_with_retry(self._sender, batch, self.settings, self._abandon, on_retry)
        except SendError as exc:
            self._failed(batch, exc, probing)
            return
        self.sent_points += len(batch)
        if probing or first_failure:
            LOG.warning("InfluxDB at %s takes points again", self.settings.target)
        self.state = LIVE

    def _failed(self, batch: list[str], exc: SendError, probing: bool) -> None:
        if exc.kind == "rejected":
            LOG.error("InfluxDB at %s refused %d points as bad data (%s); they are in %s",
                      self.settings.target, len(batch), exc, self.spool.rejected_path)
            self.spool.reject(batch)
            self.rejected_points += len(batch)
            return
        self._next_probe = time.monotonic() + self.settings.max_retry_interval_s
        if self.state == LIVE:
            why = ("check the token or user, the org, and that the bucket or database exists"
                   if exc.kind == "access" else "unreachable")
            LOG.warning("InfluxDB at %s: %s (%s); points are spooled to %s: "
                        "'nsb results push %s' sends them later", self.settings.target, why,
                        exc, self.spool.path, self.task_id or "TASK_ID")
        elif probing:
            LOG.debug("InfluxDB still failing (%s); spooling", exc)
        self.state = SPOOLING
        self._spool(batch)

    def _spool(self, batch: list[str]) -> None:
        self.spool.append(batch, self.settings.destination())
        self.spooled_points += len(batch)
