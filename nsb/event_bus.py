"""Delivers a run's events to its outputs and listeners, in order, from any thread.

A failing output is dropped so that the others keep their data; a failing
essential output (the run's own record) stops the run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from nsb.errors import NsbError, RunError
from nsb.events import Event
from nsb.outputs.base import Output

LOG = logging.getLogger("nsb.engine")


class EventBus:
    """Delivers each event to every output and listener, in order.

    A failing output is logged and dropped so that the others keep their data.
    """

    def __init__(self, outputs: Iterable[Output], listeners: Iterable[Callable[[Event], None]]):
        self.outputs = list(outputs)
        self.listeners = list(listeners)
        self._lock = threading.RLock()  # the NFVi sampler emits from its own thread

    def open(self) -> None:
        for output in list(self.outputs):
            output.open()

    def emit(self, event: Event) -> None:
        with self._lock:
            self._deliver(event)

    def _deliver(self, event: Event) -> None:
        stop: NsbError | None = None
        for output in list(self.outputs):
            try:
                output.handle(event)
            except Exception as exc:
                self.outputs.remove(output)
                if output.essential:
                    stop = exc if isinstance(exc, NsbError) else RunError(
                        f"output {output.spec.type} failed: {exc}; the run stopped")
                    continue
                LOG.exception("output %s failed on %s; it is disabled for this run",
                              output.spec.type, type(event).__name__)
        for listener in self.listeners:
            listener(event)
        if stop is not None:
            raise stop

    def close(self) -> None:
        for output in self.outputs:
            try:
                output.close()
            except Exception:
                LOG.exception("output %s failed to close", output.spec.type)
