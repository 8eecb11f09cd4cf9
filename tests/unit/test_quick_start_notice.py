"""The quick-start sample says in one line when this machine cannot give a repeatable
answer: with fewer than 4 CPUs the generator, testpmd and nsb share them, and five
runs at 64 B moved by up to 25 % around their median here (2 s and 10 s trials alike,
all limited by the generator's pace)."""

import os

from tests.conftest import SAMPLE


def _dry_run(nsb_main, monkeypatch, cpus: int) -> str:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    code, _, err = nsb_main("task", "start", "--dry-run", str(SAMPLE), "--task-args",
                            '{"generator": "trex"}')
    assert code == 0, err
    return err


def test_on_two_cpus_the_sample_says_one_run_cannot_repeat(nsb_main, monkeypatch):
    err = _dry_run(nsb_main, monkeypatch, 2)
    (line,) = [line for line in err.splitlines() if line.startswith("nsb: note:")]
    assert "2 CPU(s) are shared by the generator, testpmd and nsb" in line
    assert "no repeatable answer here" in line and "--repeat 5" in line


def test_with_cpus_to_spare_it_says_nothing(nsb_main, monkeypatch):
    assert "nsb: note:" not in _dry_run(nsb_main, monkeypatch, 8)
