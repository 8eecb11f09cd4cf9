"""Hostile and careless input, run through the real `nsb` command.

Every case of tests/hostile_corpus.py (generated here, not stored) must end
with exit 2 and one `nsb: error:` line naming the file or key, without a
traceback, without echoing a secret, within a hang guard and using little
memory (measured from the child's own rusage). The cases run in parallel in
one module fixture; each is reported as its own test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import hostile_corpus

HANG_GUARD_S = 30        # not a speed goal: a case still running after this is a hang
MAX_RSS_MB = 200
NSB = [sys.executable, "-m", "nsb"]
CASES = hostile_corpus.cases()


@dataclass
class Outcome:
    code: int | None     # None: killed by the hang guard
    stdout: str
    stderr: str
    max_rss_mb: float


def _run(case: hostile_corpus.Case) -> Outcome:
    directory = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        hostile_corpus.build(case, directory)
        with open(directory / ".out", "w+") as out, open(directory / ".err", "w+") as err:
            proc = subprocess.Popen(NSB + case.argv, cwd=directory, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err,
                                    env={**os.environ, "PYTHONPATH": str(hostile_corpus.ROOT)})
            killed = threading.Event()

            def guard():
                killed.set()
                proc.kill()

            timer = threading.Timer(HANG_GUARD_S, guard)
            timer.start()
            _, status, usage = os.wait4(proc.pid, 0)  # rusage of this child alone
            timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return Outcome(None if killed.is_set() else proc.returncode, out.read(), err.read(),
                           usage.ru_maxrss / 1024)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip([c.name for c in CASES], pool.map(_run, CASES), strict=True))


def test_the_corpus_covers_every_class_of_the_issue():
    names = {c.name for c in CASES}
    for fragment in ("billion-laughs-", "alias-cycle-", "deep-block-", "deep-flow-",
                     "dev-zero-", "fifo-", "symlink-loop-", "non-utf8-", "nul-char-",
                     "huge-int-", "big-list-", "key-null-", "duplicate-key-", "nan-",
                     "jinja-lipsum-", "jinja-power-tower-", "jinja-nested-range-",
                     "jinja-str-repeat-", "jinja-include-", "jinja-div-zero-",
                     "jinja-recursive-macro-", "task-args-deep", "task-args-injection-",
                     "task-args-surrogate", "duplicate-vnf-name", "pod-ssh-port-0",
                     "pod-password-int", "output-url-secret", "report-deep-",
                     "push-damaged-target", "inventory-to-directory"):
        assert any(fragment in name for name in names), fragment
    assert len(names) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_gets_one_located_line(case, outcomes):
    outcome = outcomes[case.name]
    assert outcome.code is not None, f"still running after {HANG_GUARD_S} s"
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert "Traceback" not in outcome.stderr, outcome.stderr[-2000:]
    assert outcome.code == 2, (outcome.code, outcome.stderr[-500:])
    assert len(lines) == 1, outcome.stderr[-2000:]
    assert lines[0].startswith("nsb: error: "), lines[0]
    if case.names:
        assert case.names in lines[0], lines[0]
    for secret in case.secrets:
        assert secret not in outcome.stdout + outcome.stderr
    assert outcome.max_rss_mb < MAX_RSS_MB, f"peak RSS {outcome.max_rss_mb:.0f} MB"
