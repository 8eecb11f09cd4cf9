"""The README's and docs' ``run`` examples, run as a user would type them (as root,
from the checkout, with the virtualenv's nsb); the other kinds are checked by
tests/unit/test_doc_examples.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nsb.report.table import HEADERS
from tests.conftest import TREX_PATH, requires_root
from tests.doc_examples import ROOT, examples

RUN = examples("run")


@pytest.mark.parametrize("example", RUN, ids=[e.where for e in RUN])
def test_run_example(example):
    requires_root()
    venv_bin = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=f"{venv_bin}:{os.environ['PATH']}")
    if (TREX_PATH / "_t-rex-64").exists():  # as a user with TRex installed runs them
        env["NSB_TREX_PATH"] = str(TREX_PATH)
    for line in example.commands():
        if line.startswith(".venv/bin/") and not (ROOT / ".venv").is_dir():
            line = line.replace(".venv/bin/", "", 1)  # a checkout tested with another venv
        done = subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=1200)
        assert done.returncode == 0, f"{example.where}: {line}\n{done.stderr[-3000:]}"
        if "task start" in line:  # the summary the README shows, with a rate per frame size
            header = next(row for row in done.stdout.splitlines() if "Frame (B)" in row)
            assert [c.strip() for c in header.strip("┃ ").split("┃")] == HEADERS
            rows = [r for r in done.stdout.splitlines() if r.startswith("│")]
            assert rows and all(int(r.split("│")[2].strip().replace(",", "")) > 0
                                for r in rows), done.stdout
