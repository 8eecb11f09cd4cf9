"""A node whose clean-up fails does not keep the other nodes from being cleaned up."""

from __future__ import annotations

import pytest

from nsb.contexts.baremetal import disconnect
from nsb.contexts.base import Node


class Executor:
    def __init__(self, fails: bool):
        self.fails, self.stopped, self.closed = fails, False, False

    def stop_all(self):
        self.stopped = True
        if self.fails:
            raise OSError("connection lost")

    def close(self):
        self.closed = True


def test_every_node_is_stopped_and_closed_and_the_first_failure_is_raised():
    executors = [Executor(True), Executor(False), Executor(True)]
    nodes = [Node(name=f"n{i}", role="", interfaces={}, executor=e)
             for i, e in enumerate(executors)]
    with pytest.raises(OSError, match="connection lost"):
        disconnect(nodes)
    assert all(e.stopped and e.closed for e in executors)
    assert all(node.executor is None for node in nodes)
