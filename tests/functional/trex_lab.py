"""TRex in the embedded lab, for the functional tests and the benchmarks.

``TREX_PATH`` (tests/conftest.py) is NSB_TREX_PATH, else ../shared/tools/trex beside
the checkout. Its STL client, loaded from there, is also the test's own second
client: it reads the server's counters independently of nsb.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from nsb.executors.local import call_in_netns
from nsb.vnfs.trex import install
from tests.conftest import ROOT, SAMPLE, TREX_PATH
from tests.functional.prox_lab import deployed

TREX_SERVER = TREX_PATH / "_t-rex-64"


def requires_trex():
    if not TREX_SERVER.exists():
        pytest.skip(f"no TRex at {TREX_PATH} (set NSB_TREX_PATH to a TRex scripts directory)")


@contextlib.contextmanager
def trex_env():
    """NSB_TREX_PATH pointing at the real TRex while the block runs (in-process runs)."""
    saved = os.environ.get("NSB_TREX_PATH")
    os.environ["NSB_TREX_PATH"] = str(TREX_PATH)
    try:
        yield
    finally:
        os.environ["NSB_TREX_PATH"] = saved or ""


def env_with_trex() -> dict:
    """The environment for an nsb subprocess that is to find TRex."""
    return dict(os.environ, NSB_TREX_PATH=str(TREX_PATH))


@contextlib.contextmanager
def running(results_dir: Path, task: Path = SAMPLE, **task_args):
    """The task's context deployed, its SUT and TRex ready; yields the scenario plan.
    Everything is torn down afterwards."""
    with contextlib.ExitStack() as teardown:
        teardown.enter_context(trex_env())
        yield teardown.enter_context(deployed(results_dir, task, task_args, ready_s=60.0))


def second_client(gen):
    """Another STL client on the same TRex server (inside its namespace), not nsb's."""
    api = install.load_stl_api(TREX_PATH / install.CLIENT_SUBDIR)
    client = api.STLClient(server="127.0.0.1", sync_port=gen.rpc_port, async_port=gen.pub_port,
                           verbose_level="none")
    call_in_netns(f"/run/netns/{gen.executor.netns}", client.connect)
    return client


__all__ = ["ROOT", "requires_trex", "running", "second_client", "env_with_trex"]
