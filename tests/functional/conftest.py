import pytest

from tests.conftest import requires_root
from tests.functional.sshd_node import sshd_node


@pytest.fixture(scope="module")
def node():
    """A lab node reached over SSH: a real sshd in a namespace, one per test module."""
    requires_root()
    with sshd_node() as started:
        yield started
