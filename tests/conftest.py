import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "tc_testpmd_netns_rfc2544.yaml"
NSB = [sys.executable, "-m", "nsb"]

# TRex for the tests that run it: NSB_TREX_PATH, else ../shared/tools/trex beside the
# checkout. Every other test sees no TRex (the lab sample then uses trafgen), whatever
# this machine has installed; the TRex tests hand TREX_PATH to what they start.
TREX_PATH = Path(os.environ.get("NSB_TREX_PATH") or ROOT.parent / "shared" / "tools" / "trex")
os.environ["NSB_TREX_PATH"] = str(ROOT / "tests" / "no-trex-here")


@pytest.fixture(autouse=True)
def _results_follow_the_schema(request):
    """Every results.json nsb writes under a test's tmp_path follows
    docs/results.schema.json (checked when the test ends)."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    tmp_path = request.getfixturevalue("tmp_path")
    yield
    from tests import results_schema

    results_schema.check_tree(tmp_path)


@pytest.fixture
def nsb_main(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    from nsb.cli import main

    def run(*argv):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def results_conf(tmp_path):
    """A config file that keeps results and logs under tmp_path."""
    conf = tmp_path / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/results\nlog_dir = {tmp_path}/logs\n")
    return conf


def requires_root():
    if os.geteuid() != 0:
        pytest.fail("functional tests need root (make test runs them as root)")
