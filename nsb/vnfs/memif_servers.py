"""A memif client connects once, when its program starts the port: DPDK's memif PMD
does not try again, so a client started before its server created the socket has a
link that never comes up (TRex waited that way beside a testpmd slow to start on a
loaded machine). A client therefore waits for the sockets it connects to."""

from __future__ import annotations

import logging
import time

LOG = logging.getLogger(__name__)

POLL_S = 0.05


def wait_for_servers(executor, sockets: list[str], timeout_s: float, name: str) -> None:
    """Until every one of ``sockets`` exists on the executor's node, at most
    ``timeout_s``; then the client starts anyway (its peer's readiness says why)."""
    deadline = time.monotonic() + timeout_s
    missing = list(sockets)
    while missing:
        missing = [path for path in missing
                   if executor.run(["test", "-S", path], check=False).returncode != 0]
        if not missing:
            return
        if time.monotonic() >= deadline:
            LOG.warning("%s: no memif server created %s in %g s; starting anyway", name,
                        ", ".join(missing), timeout_s)
            return
        time.sleep(POLL_S)
