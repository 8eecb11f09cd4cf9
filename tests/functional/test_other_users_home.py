"""nsb run by a user other than root whose HOME is root's, as ``sudo -u USER nsb``
leaves it: the run registry (``~/.cache/nsb/runs``) is then in a directory that user
cannot enter, and so may be a results directory or a pod file.

The real ``nsb`` runs as ``nobody`` (every Debian has it: nothing to create or
remove), HOME a 0700 directory of root's. Commands that only need a fresh task id
run on, with at most one warning naming the registry; commands that must read what
they cannot stop with one line naming it, exit 2; never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE, requires_root

USER = "nobody"
TASK_ID = "261206-000000-abcdef"
IMPORTS = "import nsb.cli, jinja2, jsonschema, oslo_config, rich, stevedore, yaml"


@dataclass
class Place:
    home: Path  # root's stand-in HOME: 0700, owned by root
    work: Path  # the user's copies of the samples (readable)
    out: Path  # where the user may write: results, logs
    locked: Path  # a results directory of root's, 0700, with a run in it
    shared: Path  # root's results, readable by all (as /var/lib/nsb/results), two runs
    runs: list[str]  # their task ids
    python: list[str]
    pythonpath: str

    @property
    def registry(self) -> Path:
        return self.home / ".cache" / "nsb" / "runs"


def _interpreters() -> list[tuple[list[str], str]]:
    """This test's Python with the checkout, else the system's with this environment's
    libraries too (a virtualenv's interpreter may live under root's HOME)."""
    libraries = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return [([sys.executable], str(ROOT)),
            (["/usr/bin/python3"], os.pathsep.join([str(ROOT), *sorted(libraries)]))]


def _as_user(env: dict, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    user = pwd.getpwnam(USER)
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env,
                          user=user.pw_uid, group=user.pw_gid, extra_groups=[], timeout=120)


def _env(home: Path, pythonpath: str) -> dict:
    """What ``sudo -u`` keeps that matters here: HOME. No XDG_RUNTIME_DIR, no
    NSB_STATE_DIR, no TRex (the lab sample falls back to trafgen)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "LANG": "C.UTF-8", "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1",
            "NSB_TREX_PATH": os.environ["NSB_TREX_PATH"]}


def _simulated_run(results_dir: Path, capacity_pps: float, now: float) -> str:
    """A finished run of the lab sample against a simulated DUT, written as root."""
    from nsb import engine
    from nsb.runinfo import new_task_id
    from tests.doubles.simulated_dut import SimulatedDutGenerator
    from tests.unit.test_pipeline import build

    plan = build(results_dir, SimulatedDutGenerator(capacity_pps))
    task_id = new_task_id(lambda candidate: (results_dir / candidate).exists(), now=now)
    run = dataclasses.replace(plan.run, task_id=task_id, results_dir=results_dir / task_id)
    plan.run = plan.context.run = run
    for output in plan.outputs:
        output.run = run
    engine.execute(plan)
    return task_id


@pytest.fixture(scope="module")
def place():
    requires_root()
    base = Path(tempfile.mkdtemp(prefix="other-user-"))
    try:
        base.chmod(0o755)
        home, work, out, locked = (base / name for name in ("home", "work", "out", "locked"))
        (home / ".cache" / "nsb" / "runs").mkdir(parents=True)  # root ran nsb before
        home.chmod(0o700)
        shutil.copytree(ROOT / "samples" / "prox", work / "prox")
        shutil.copy(SAMPLE, work / "task.yaml")
        shutil.copy(work / "prox" / "pod.yaml", work / "prox" / "readable_pod.yaml")
        (work / "prox" / "pod.yaml").chmod(0o600)  # root's pod file
        out.mkdir()
        os.chown(out, pwd.getpwnam(USER).pw_uid, -1)
        (work / "nsb.conf").write_text(f"[DEFAULT]\nresults_dir = {out}/results\n"
                                       f"log_dir = {out}/logs\n")
        (locked / TASK_ID).mkdir(parents=True)
        (locked / TASK_ID / "results.json").write_text(json.dumps({"task": {"id": TASK_ID}}))
        locked.chmod(0o700)
        shared = base / "shared"
        runs = [_simulated_run(shared, capacity, now) for capacity, now in
                ((100_000.0, 1_795_000_000), (110_000.0, 1_795_000_100))]
        for python, pythonpath in _interpreters():
            try:
                probe = _as_user(_env(home, pythonpath), [*python, "-c", IMPORTS], work)
            except PermissionError:  # the interpreter itself is out of the user's reach
                continue
            if probe.returncode == 0:
                yield Place(home, work, out, locked, shared, runs, python, pythonpath)
                return
        pytest.skip(f"no Python that user {USER} may run sees nsb and its libraries "
                    f"(the checkout at {ROOT} or its virtualenv is not readable by others)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _nsb(place: Place, *argv: str) -> tuple[int, str, str]:
    done = _as_user(_env(place.home, place.pythonpath), [*place.python, "-m", "nsb", *argv],
                    place.work)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_the_user_cannot_enter_the_home_it_was_given(place):
    """The premise: as this user, the registry's directory is out of reach."""
    code, _, err = _nsb(place, "task", "list", "--results-dir", str(place.registry))
    assert code == 2 and "Permission denied" in err, err


@pytest.mark.parametrize("argv", [
    ["task", "validate", "task.yaml"],
    ["task", "start", "--dry-run", "task.yaml"],
    ["task", "validate", "prox/tc_prox_l3fwd.yaml", "--task-args",
     '{"pod": "readable_pod.yaml"}'],
], ids=["validate", "dry-run", "validate-yardstick"])
def test_checking_a_task_needs_no_registry(place, argv):
    """A dry run makes and registers nothing: it neither reads the registry nor warns."""
    code, out, err = _nsb(place, *argv)
    assert code == 0, err
    assert str(place.home) not in err and "registry" not in err, err
    assert all(line.startswith("nsb: note: ") for line in err.splitlines()), err


def test_a_run_goes_on_with_one_warning_naming_the_registry(place):
    """It gets as far as this user can go: the lab's namespaces need root (exit 3)."""
    results = place.out / "one-run"
    code, _, err = _nsb(place, "--config-file", "nsb.conf", "task", "start", "task.yaml",
                        "--results-dir", str(results))
    lines = err.splitlines()
    about = [line for line in lines if str(place.registry) in line]
    assert len(about) == 1 and "Permission denied" in about[0], err
    assert about[0].startswith("WARNING ") and "NSB_STATE_DIR" in about[0]
    errors = [line for line in lines if line.startswith("nsb: error: ")]
    assert code == 3 and len(errors) == 1 and "needs root" in errors[0], err
    assert lines[-1] == errors[0]
    [written] = results.glob("*/results.json")
    assert json.loads(written.read_text())["task"]["status"] == "error"


def test_a_suite_warns_once_for_all_its_cases(place):
    suite = place.work / "suite.yaml"
    suite.write_text('schema: "yardstick:suite:0.1"\nname: twice\ntest_cases:\n'
                     "  - {file_name: task.yaml, task_args: {default: '{\"duration_s\": 1}'}}\n"
                     "  - {file_name: task.yaml, task_args: {default: '{\"duration_s\": 2}'}}\n")
    code, out, err = _nsb(place, "--config-file", "nsb.conf", "task", "start", "--suite",
                          str(suite))
    assert code == 3, err
    assert len([line for line in err.splitlines() if str(place.registry) in line]) == 1, err
    assert "task[duration_s=1]" in out and "task[duration_s=2]" in out


@pytest.mark.parametrize("argv", [
    ["task", "list"], ["task", "list", "--suite", TASK_ID], ["task", "show", TASK_ID],
    ["task", "gate", TASK_ID, "--sla", "ndr_pps>=1"], ["task", "gate", TASK_ID, "--trend"],
    ["report", "table", TASK_ID], ["report", "html", TASK_ID, "-o", "-"],
    ["report", "trend"], ["results", "push", TASK_ID],
], ids=" ".join)
def test_a_results_directory_the_user_cannot_read_is_one_line(place, argv):
    code, out, err = _nsb(place, *argv, "--results-dir", str(place.locked))
    where = "" if argv[0] == "results" else " (--results-dir)"
    assert (code, out) == (2, ""), err
    assert err.splitlines() == [f"nsb: error: {place.locked}: cannot read the results "
                                f"directory{where}: Permission denied"]


@pytest.mark.parametrize("argv", [
    ["task", "list"], ["task", "show", "{newest}"], ["report", "table", "{newest}"],
    ["report", "html", "{oldest}", "{newest}", "-o", "-"], ["report", "trend"],
    ["task", "gate", "{newest}", "--trend"], ["task", "gate", "{newest}", "--sla",
                                             "ndr_pps>=1"],
], ids=" ".join)
def test_root_s_results_are_read_as_they_are(place, argv):
    """Results another user may read but not write (root's /var/lib/nsb/results): every
    history command works, and keeps nothing there (the trends' cache)."""
    names = {"oldest": place.runs[0], "newest": place.runs[-1]}
    code, out, err = _nsb(place, *(arg.format(**names) for arg in argv), "--results-dir",
                          str(place.shared))
    assert (code, err) == (0, ""), err
    assert out.strip() and not list(place.shared.glob(".trend-cache"))


def test_a_pod_file_the_user_cannot_read_is_one_line_naming_it(place):
    code, _, err = _nsb(place, "task", "validate", "prox/tc_prox_l3fwd.yaml")
    (line,) = err.splitlines()
    assert code == 2 and line.startswith("nsb: error: "), err
    assert "pod file prox/pod.yaml: cannot read file: Permission denied" in line, line
