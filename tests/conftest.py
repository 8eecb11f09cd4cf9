import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "tc_testpmd_netns_rfc2544.yaml"
NSB = [sys.executable, "-m", "nsb"]


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
