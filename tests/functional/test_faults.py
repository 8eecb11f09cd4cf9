"""Faults injected into real runs of the embedded sample (namespaces, testpmd,
trafgen): nsb killed with SIGKILL, the DUT killed, the results disk full.

Each test first checks that the fault really happened (leftovers exist after
SIGKILL, testpmd is gone, the disk is full), then what nsb made of it.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import requires_root
from tests.functional.lab import leftovers, results_of, start


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def _wait_for(predicate, proc, what: str, timeout_s: float = 120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout_s:.0f} s")


def _events(results_dir: Path):
    """(task id, event names so far) of the one run writing to ``results_dir``."""
    found = list(results_dir.glob("*/events.jsonl"))
    if not found:
        return None
    names = [json.loads(line)["event"] for line in found[0].read_text().splitlines()
             if line.endswith("}")]
    return found[0].parent.name, names


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("nsb: error")]


def test_after_sigkill_the_next_run_removes_what_was_left(results_conf, tmp_path):
    killed = start(results_conf, {"duration_s": 5, "packet_sizes": [64]})
    task_id, _ = _wait_for(lambda: (e := _events(tmp_path / "results")) and
                           "TrialStarted" in e[1] and e, killed, "trial")
    time.sleep(1.0)  # mid-trial: testpmd, trafgen and the probe all run
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    left = leftovers(task_id)
    assert any(item.startswith("netns") for item in left), left  # the fault is real
    assert any("testpmd" in item for item in left), left
    _, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "running"

    second_dir = tmp_path / "second"
    conf = tmp_path / "second.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {second_dir}\nlog_dir = {tmp_path}/logs\n")
    after = start(conf, {"duration_s": 1, "packet_sizes": [64]})
    _, err = after.communicate(timeout=600)
    assert after.returncode == 0, err
    assert f"task {task_id} ended without cleaning up" in err
    assert leftovers(task_id) == []
    doc = json.loads((tmp_path / "results" / task_id / "results.json").read_text())
    assert doc["task"]["status"] == "killed"
    second_id, second = results_of(second_dir)
    assert second["task"]["status"] == "ok" and second["results"]
    assert leftovers(second_id) == []


def test_a_dut_that_dies_ends_the_run_with_one_line_naming_it(results_conf, tmp_path):
    proc = start(results_conf, {"duration_s": 2, "packet_sizes": [64, 1518]})
    task_id, _ = _wait_for(lambda: (e := _events(tmp_path / "results")) and
                           "TrialDone" in e[1] and e, proc, "finished trial")
    pids = subprocess.run(["pgrep", "-f", f"file-prefix.nsb-{task_id}-testpmd0"],
                          capture_output=True, text=True).stdout.split()
    assert pids, "testpmd is not running"
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err  # a run-time failure
    assert "Traceback" not in err
    assert _error_lines(err) == [
        "nsb: error: testpmd0 (testpmd) on node sut was killed by SIGKILL during the run; "
        "the trials measured before are kept"], err
    _, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "error"
    assert "testpmd0 (testpmd) on node sut was killed by SIGKILL" in doc["task"]["error"]
    # the first trial, and the one testpmd died in, were measured and are kept
    assert len(doc["trials"]) >= 2
    assert leftovers(task_id) == []


@pytest.fixture
def small_results_disk(tmp_path):
    mount = tmp_path / "results"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_results_disk_stops_the_run_with_one_line(small_results_disk, tmp_path):
    conf = tmp_path / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {small_results_disk}\nlog_dir = {tmp_path}/logs\n")
    proc = start(conf, {"duration_s": 1, "packet_sizes": [64, 1518]})
    task_id, _ = _wait_for(lambda: (e := _events(small_results_disk)) and
                           "TrialDone" in e[1] and e, proc, "finished trial")
    before = json.loads((small_results_disk / task_id / "results.json").read_text())
    with open(small_results_disk / "filler", "wb") as filler:  # fill the disk
        with pytest.raises(OSError):
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
    _, err = proc.communicate(timeout=300)
    (small_results_disk / "filler").unlink()
    assert proc.returncode == 3, err  # a run-time failure
    assert "Traceback" not in err and "Logging error" not in err
    lines = _error_lines(err)
    assert len(lines) == 1 and "No space left on device; the run stopped" in lines[0], err
    doc = json.loads((small_results_disk / task_id / "results.json").read_text())
    assert len(doc["trials"]) >= len(before["trials"]) >= 1
    assert not list((small_results_disk / task_id).glob("*.tmp"))
    assert leftovers(task_id) == []
