"""The DUT's own count of the sessions a stateful trial opened: its witness.

Before each stateful trial every DUT that keeps state forgets what it holds (its
``reset_state``: the conntrack table flushed, a NAT's table cleared), so a trial never
inherits another's sessions; while the trial runs its ``session_count`` is sampled
every ``PERIOD_S``, so the count a trial reports is the most the DUT held at once
(sessions closed by the trial's end were held while it ran), read by the DUT itself.
A trial whose sessions are held (concurrent sessions, stateful throughput) counts only
those open (conntrack's established TCP entries, not the closed ones it keeps a while):
a connection let in after others closed was never held together with them.
"""

from __future__ import annotations

import logging
import threading

from nsb.errors import RunError
from nsb.vnfs.base import Vnf

LOG = logging.getLogger(__name__)
PERIOD_S = 0.1


class SessionWitness:
    """The stateful DUTs of a scenario (``KEEPS_STATE``), reset and counted per trial."""

    def __init__(self, vnfs: list[Vnf], reset: bool = True):
        self.duts = [vnf for vnf in vnfs if vnf.KEEPS_STATE]
        self.reset = reset  # False: the profile measures the DUTs as they are
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._peak: int | None = None
        self._failure: Exception | None = None
        self.open_only = False

    def start(self, open_only: bool = False, reset: bool = True) -> None:
        """Reset every stateful DUT (unless the profile or the trial says not), then
        sample their counts (``open_only``: of the sessions open) until ``peak``."""
        if not self.duts:
            return
        self.open_only = open_only
        for dut in self.duts if self.reset and reset else ():
            dut.reset_state()
        self._peak, self._failure = self._count(), None
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, name="session-witness",
                                        daemon=True)
        self._thread.start()

    def peak(self) -> int | None:
        """The most sessions the DUTs held at once during the trial (their sum), counted
        once more at its end; None without a stateful DUT."""
        if self._thread is None:
            return None
        self._stop.set()
        self._thread.join()
        self._thread = None
        if self._failure is not None:
            raise RunError(f"counting the DUT's sessions failed: {self._failure}")
        return max(self._peak or 0, self._count())

    def _count(self) -> int:
        return sum(dut.session_count(self.open_only) for dut in self.duts)

    def _sample(self) -> None:
        while not self._stop.wait(PERIOD_S):
            try:
                self._peak = max(self._peak or 0, self._count())
            except Exception as exc:  # noqa: BLE001  (kept, raised once the trial ends)
                self._failure = exc
                return
