"""Every code block of README.md and docs/ is checked, so an example cannot rot.

The blocks that need root or a real lab (``run``) are run by
tests/functional/test_doc_examples.py; everything else is checked here.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from nsb import config
from nsb.cli import main
from nsb.errors import NsbError
from nsb.plugins import NAMESPACES
from nsb.report.table import HEADERS
from tests.doc_examples import KINDS, NEEDS_NOTE, ROOT, Example, examples, merge_task

_PLACEHOLDER = re.compile(r"^[A-Z_]+$|[\[\]|<>]|\.\.\.|^-")


def _ids(kind: str) -> dict:
    found = examples(kind)
    return {"argvalues": found, "ids": [e.where for e in found]}


def nsb_argv(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] in ("nsb", ".venv/bin/nsb"), f"not an nsb command: {command}"
    return words[1:]


def run_nsb(*argv: str) -> tuple[int, str]:
    """nsb in-process; (exit code, what it printed on stdout and stderr)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code
    return code, out.getvalue()


# --- the checks, one per kind ---------------------------------------------------------------

def check_usage(example: Example) -> None:
    for line in example.commands():
        words = shlex.split(line)
        if words[0] == "export":  # setting the environment for the next line
            continue
        if words[0] == "make":
            targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
            missing = [w for w in words[1:] if w not in targets]
            assert not missing, f"{example.where}: no make target {missing}"
        elif words[0].endswith("python") or words[0].endswith(".py"):
            script = next(w for w in words if w.endswith(".py"))
            done = subprocess.run([sys.executable, str(ROOT / script), "--help"],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"{example.where}: {script} --help: {done.stderr}"
        else:
            argv = nsb_argv(line)
            chain = []
            for word in argv:
                if _PLACEHOLDER.search(word) or not re.match(r"^[a-z][a-z-]*$", word):
                    break
                chain.append(word)
            code, text = run_nsb(*chain, "--help")
            assert code == 0, f"{example.where}: nsb {' '.join(chain)} --help: {text}"
            options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))
            unknown = [o for o in options if o not in text]
            assert not unknown, f"{example.where}: nsb {' '.join(chain)} has no {unknown}"


def check_dry_run(example: Example, tmp_path: Path) -> None:
    for line in example.commands():
        argv = nsb_argv(line)
        assert argv[:2] == ["task", "start"], f"{example.where}: not a task start: {line}"
        code, text = run_nsb(*argv, "--dry-run", "--results-dir", str(tmp_path))
        assert code == 0, f"{example.where}: {line} --dry-run: {text}"


def _pod_for(task_text: str, folder: Path) -> None:
    """A pod with the nodes and interfaces the links name, for a fragment that
    names a pod file that does not exist (the lab's own pod in real use)."""
    for name in re.findall(r"^\s*file:\s*(\S+)", task_text, re.M):
        if (folder / name).exists():
            continue
        nodes: dict[str, set] = {}
        for node, iface in re.findall(r"(\w+):(xe\d+)", task_text):
            nodes.setdefault(node, set()).add(iface)
        pod = ["nodes:"]
        for index, (node, ifaces) in enumerate(sorted(nodes.items())):
            pod += [f"  - name: {node}", f"    role: {'TrafficGen' if index == 1 else 'Sut'}",
                    f"    ip: 192.0.2.{index + 1}", "    user: root",
                    "    key_filename: /root/.ssh/id_ed25519", "    interfaces:"]
            for number, iface in enumerate(sorted(ifaces)):
                pod += [f"      {iface}:", f"        vpci: '0000:05:00.{number}'",
                        f"        local_mac: '02:00:00:00:0{index}:0{number}'",
                        f"        local_ip: 10.0.{number}.{index + 1}",
                        "        netmask: 255.255.255.0", "        driver: vfio-pci",
                        f"        dpdk_port_num: {number}"]
        (folder / name).write_text("\n".join(pod) + "\n")


def check_task_text(text: str, where: str, folder: Path) -> None:
    task = folder / "task.yaml"
    task.write_text(text)
    _pod_for(text, folder)
    code, out = run_nsb("task", "validate", str(task))
    assert code == 0, f"{where}: {out}"


def check_task(example: Example, tmp_path: Path) -> None:
    check_task_text(example.text, example.where, tmp_path)


def check_fragment(example: Example, tmp_path: Path) -> None:
    base = ROOT / example.note.split()[0]
    check_task_text(merge_task(base.read_text(), example.text), example.where, tmp_path)


def check_conf(example: Example, tmp_path: Path) -> None:
    path = tmp_path / "nsb.conf"
    path.write_text(example.text)
    try:
        config.load([str(path)])
    except NsbError as exc:
        raise AssertionError(f"{example.where}: {exc}") from None


def check_checked_by(example: Example) -> None:
    test = ROOT / example.note.split()[0]
    assert test.is_file(), f"{example.where}: {test} does not exist"
    assert example.file.name in test.read_text(), f"{example.where}: {test} does not read it"


def check_entry_points(example: Example) -> None:
    parser = configparser.ConfigParser()
    parser.read_string(example.text)
    groups = set(parser["options.entry_points"])
    assert groups and groups <= set(NAMESPACES), f"{example.where}: {groups - set(NAMESPACES)}"


CHECKS = {
    "usage": lambda e, tmp: check_usage(e), "dry-run": check_dry_run, "task": check_task,
    "task-fragment": check_fragment, "nsb-conf": check_conf,
    "entry-points": lambda e, tmp: check_entry_points(e),
    "checked-by": lambda e, tmp: check_checked_by(e),
}


# --- the tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("example", **_ids(None))
def test_every_block_says_how_it_is_checked(example):
    assert example.kind in KINDS, (f"{example.where}: precede the block with "
                                   f"<!-- example: KIND ... --> (KIND one of {sorted(KINDS)})")
    if example.kind in NEEDS_NOTE:
        assert example.note, f"{example.where}: '{example.kind}' needs a note saying why/what"


@pytest.mark.parametrize("example", [e for e in examples() if e.kind in CHECKS],
                         ids=[e.where for e in examples() if e.kind in CHECKS])
def test_example(example, tmp_path):
    CHECKS[example.kind](example, tmp_path)


def test_the_kinds_that_need_checking_are_there():
    kinds = {e.kind for e in examples()}
    assert {"run", "usage", "task", "task-fragment", "nsb-conf", "dry-run"} <= kinds


def test_the_summary_table_shown_has_the_columns_nsb_prints():
    tables = [e for e in examples("output") if e.note.startswith("of nsb task start (")]
    assert tables  # the README's and the getting-started page's
    for shown in tables:
        header = next(line for line in shown.text.splitlines() if "Frame (B)" in line)
        assert [cell.strip() for cell in header.strip("┃ \n").split("┃")] == HEADERS, shown.where


@pytest.mark.parametrize("kind, old, new", [
    ("task", "packet_sizes", "packet_size"),
    ("task-fragment", "database", "databse"),
    ("nsb-conf", "results_dir", "results_dri"),
    ("usage", "report table", "report tabel"),
    ("usage", "--format", "--formta"),
    ("dry-run", "tc_ovs_pvp", "tc_ovs_pvpp"),
])
def test_a_broken_example_fails_its_check(kind, old, new, tmp_path):
    example = next(e for e in examples(kind) if old in e.text)
    broken = Example(example.file, example.line, kind, example.note, example.lang,
                     example.text.replace(old, new))
    with pytest.raises(AssertionError):
        CHECKS[kind](broken, tmp_path)


def test_report_table_flags_a_failed_task_as_docs_report_md_shows(tmp_path):
    from tests.unit.test_report import write_task

    error = "testpmd0: dpdk-testpmd exited with code 1 while starting"
    write_task(tmp_path, "84cda5c9", [], status="error", error=error)
    write_task(tmp_path, "0000aaaa", [], status="ok")
    code, out = run_nsb("report", "table", "84cda5c9", "--results-dir", str(tmp_path))
    (shown,) = [e for e in examples("output") if "failed task" in e.note]
    assert code == 1 and shown.text.strip() in out.splitlines()
    code, out = run_nsb("report", "table", "0000aaaa", "--results-dir", str(tmp_path),
                        "--format", "csv")
    assert code == 0 and "did not finish" not in out
