import time

import pytest

from tests.conftest import requires_root
from tests.functional.lab import snapshot
from tests.functional.sshd_node import sshd_node


@pytest.fixture(scope="module")
def node():
    """A lab node reached over SSH: a real sshd in a namespace, one per test module."""
    requires_root()
    with sshd_node() as started:
        yield started


def _left_behind(before: set[str], wait_s: float) -> set[str]:
    deadline = time.monotonic() + wait_s
    while True:  # a process may take a moment to be reaped after its run returned
        left = snapshot() - before
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


@pytest.fixture(autouse=True)
def nothing_left_by_the_test():
    """Every functional test leaves the machine as it found it: no namespace, link,
    process, DPDK runtime dir, /tmp/nsb* entry or file in the working directory."""
    before = snapshot()
    yield
    left = _left_behind(before, wait_s=3.0)
    assert not left, "left behind by this test:\n" + "\n".join(sorted(left))


@pytest.fixture(scope="module", autouse=True)
def nothing_left_by_the_module():
    """The same for the module's fixtures (an sshd node, a database server)."""
    before = snapshot()
    yield
    left = _left_behind(before, wait_s=3.0)
    assert not left, "left behind by this module:\n" + "\n".join(sorted(left))
