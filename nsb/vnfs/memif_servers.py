"""A memif client connects once, when its program starts the port, and never again
(DPDK's memif PMD has no retry). A server's socket exists from the EAL's device probe,
but the server answers a client only from its port's start on: before that it says "ID
not found" and closes, and the client's link never comes up (seen with TRex beside a
testpmd slow to start on a loaded machine). So a client starts only once each VNF
serving a socket it connects to says the socket accepts clients."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

LOG = logging.getLogger(__name__)

POLL_S = 0.05


def sockets_served(node) -> set[str]:
    return {i.socket for i in _interfaces(node) if i.is_memif and i.serves_socket}


def sockets_connected(node) -> set[str]:
    return {i.socket for i in _interfaces(node) if i.is_memif and not i.serves_socket}


def wait_for_servers(client, started: Iterable, timeout_s: float) -> None:
    """Before ``client`` starts: until every VNF of ``started`` serving a memif socket
    the client's node connects to says that socket accepts clients (at most
    ``timeout_s``; then the client starts anyway and its peer's readiness says why)."""
    wanted = sockets_connected(client.node)
    if not wanted:
        return
    deadline = time.monotonic() + timeout_s
    for server in started:
        sockets = sorted(wanted & sockets_served(server.node))
        if sockets and not server.wait_serving(sockets, deadline):
            LOG.warning("%s: %s does not accept memif clients on %s after %g s; starting "
                        "anyway", client.name, server.name, ", ".join(sockets), timeout_s)


def poll_until(ready: Callable[[], bool], deadline: float) -> bool:
    """Whether ``ready()`` became true before ``deadline`` (time.monotonic())."""
    while not ready():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def sockets_exist(executor, sockets: list[str]) -> bool:
    return all(executor.run(["test", "-S", path], check=False).returncode == 0
               for path in sockets)


def _interfaces(node) -> list:
    return list((getattr(node, "interfaces", None) or {}).values())
