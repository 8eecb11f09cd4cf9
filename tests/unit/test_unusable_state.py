"""Directories nsb keeps state in that it cannot use: the run registry is a warning and
the run goes on, a results directory it cannot read is one line, and any path it may
not read is one line naming it, never a traceback.

Unit tests run as any user, so the unusable directory here is one under a regular
file (ENOTDIR, refused to root too); tests/functional/test_other_users_home.py runs
the real case, another user with root's HOME."""

from __future__ import annotations

import errno
import logging

import pytest

from nsb import leftovers
from nsb.cli import task_plan
from nsb.errors import TaskError
from nsb.task import input_file
from tests.conftest import SAMPLE

TASK = "261122-000000-abcdef"


@pytest.fixture
def no_registry(tmp_path, monkeypatch):
    """A registry under a regular file: every use of it fails as another user's does."""
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "file" / "runs")
    monkeypatch.setattr(leftovers, "_UNUSABLE", set())
    return leftovers.STATE_DIR


def test_a_registry_nsb_cannot_use_is_one_warning_and_the_run_goes_on(no_registry, caplog,
                                                                      tmp_path):
    caplog.set_level(logging.WARNING)
    assert not leftovers.in_registry(TASK)
    assert leftovers.clean_killed_runs() == []
    ran = False
    with leftovers.registered(TASK, tmp_path / "results", "tc.yaml"):
        leftovers.note_hugepages(TASK, 64)
        ran = True
    assert ran
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert str(no_registry) in warning and "Not a directory" in warning
    assert "NSB_STATE_DIR" in warning


def test_a_run_nsb_cannot_look_up_is_taken_for_alive(no_registry):
    """Its NICs, pages and namespaces stay: giving back a live run's would break it."""
    assert leftovers.run_alive(TASK)


def test_a_run_is_alive_only_while_its_entry_is_locked(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    assert not leftovers.run_alive(TASK)  # no entry
    with leftovers.registered(TASK, tmp_path / "results", "tc.yaml"):
        assert leftovers.run_alive(TASK) and leftovers.in_registry(TASK)
    assert not leftovers.run_alive(TASK) and not leftovers.in_registry(TASK)


def test_a_fresh_task_id_is_in_neither_the_results_nor_the_registry(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    (tmp_path / "results" / "a").mkdir(parents=True)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "b.json").write_text("{}")
    taken = task_plan._taken(tmp_path / "results", dry_run=False)
    assert taken("a") and taken("b") and not taken("c")
    # a dry run makes nothing under its id: it reads neither directory
    assert not task_plan._taken(tmp_path / "results", dry_run=True)("a")


def test_validate_and_dry_run_do_not_read_the_registry(nsb_main, monkeypatch):
    def read(task_id):
        raise AssertionError(f"read the registry for {task_id}")

    monkeypatch.setattr(leftovers, "in_registry", read)
    for argv in (["task", "validate", str(SAMPLE)], ["task", "start", "--dry-run",
                                                     str(SAMPLE)]):
        code, _, err = nsb_main(*argv)
        assert code == 0, err


def test_a_results_directory_nsb_cannot_read_is_one_line_naming_it(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(TaskError) as raised:
        input_file.check_readable_dir(tmp_path / "file" / "results", "the results directory")
    assert str(raised.value) == (f"{tmp_path}/file/results: cannot read the results "
                                 "directory: Not a directory")
    input_file.check_readable_dir(tmp_path / "not-yet", "the results directory")  # empty
    input_file.check_readable_dir(tmp_path, "the results directory")


def test_a_directory_without_read_permission_is_refused(tmp_path, monkeypatch):
    """What ``sudo -u`` meets in root's 0700 directories (root itself may read them)."""
    monkeypatch.setattr(input_file.os, "access", lambda *args, **kwargs: False)
    with pytest.raises(TaskError, match="cannot read the results directory: Permission denied"):
        input_file.check_readable_dir(tmp_path, "the results directory")


@pytest.mark.parametrize("argv", [
    ["task", "list"], ["task", "list", "--suite", "2611"], ["task", "show", "2611"],
    ["task", "gate", "2611", "--sla", "ndr_pps>=1"], ["task", "gate", "2611", "--trend"],
    ["report", "table", "2611"], ["report", "html", "2611"], ["report", "trend"],
    ["results", "push", "2611"],
], ids=" ".join)
def test_every_command_reading_the_results_says_it_cannot_in_one_line(nsb_main, tmp_path,
                                                                       argv):
    (tmp_path / "file").write_text("")
    results = tmp_path / "file" / "results"
    code, _, err = nsb_main(*argv, "--results-dir", str(results))
    assert code == 2, err
    assert err.splitlines() == [f"nsb: error: {results}: cannot read the results directory"
                                + (" (--results-dir)" if argv[0] != "results" else "")
                                + ": Not a directory"]


def test_a_path_nsb_may_not_read_is_one_line_naming_it(nsb_main, monkeypatch):
    from nsb.report import history

    def denied(results_dir):
        raise PermissionError(errno.EACCES, "Permission denied", "/root/.cache/x")

    monkeypatch.setattr(history, "runs", denied)
    code, out, err = nsb_main("task", "list", "--results-dir", "/tmp")
    assert (code, err) == (2, "nsb: error: /root/.cache/x: Permission denied\n")


def test_a_permission_error_naming_no_path_is_a_bug_with_its_traceback(nsb_main,
                                                                       monkeypatch):
    from nsb.report import history

    def denied(results_dir):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(history, "runs", denied)
    with pytest.raises(PermissionError):
        nsb_main("task", "list", "--results-dir", "/tmp")
