"""Hostile and careless input for `nsb task validate` / `--dry-run` and friends.

Each case is built on the fly from the project's own samples (an nsb task and
a Yardstick PROX task with its pod, topology, descriptors and profile) by one
mutation: resource bombs (alias expansion, nesting, endless files, FIFOs,
template towers), malformed bytes, wrong types, values that must not pass
(NaN, duplicates), injection through task args and secrets that must never be
echoed. Every case must end with exit 2 and one line on stderr.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NSB_TASK = "task.yaml"                  # copy of samples/tc_testpmd_netns_rfc2544.yaml
YS_TASK = "prox/tc_prox_l3fwd.yaml"     # copy of samples/prox
SECRET = "hunter2-s3cr3t"
NSB = [sys.executable, "-m", "nsb"]
HANG_GUARD_S = 30  # not a speed goal: a case still running after this is a hang


@dataclass
class Case:
    name: str
    argv: list[str]                      # after `nsb`, run in the case's directory
    mutate: Callable[[Path], None] = lambda d: None
    names: str | None = None             # the error line must name this (a file, a key)
    secrets: tuple[str, ...] = ()        # must not appear in any output
    extra: dict = field(default_factory=dict)
    mistakes: int = 1                    # error lines: one per mistake the case makes


@dataclass
class Outcome:
    code: int | None     # None: killed by the hang guard
    stdout: str
    stderr: str
    max_rss_mb: float
    elapsed_s: float


# Linux keeps a process's peak RSS across exec, so a child forked from a large test
# process would report the parent's peak: a small launcher forks the command and
# reports the peak of that grandchild alone (wait4's rusage).
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_case(case: Case) -> Outcome:
    """Run one case with the real `nsb` in a fresh directory; rusage of that child alone."""
    directory = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        build(case, directory)
        with open(directory / ".out", "w+") as out, open(directory / ".err", "w+") as err:
            started = time.monotonic()
            rss_file = directory / ".maxrss"
            proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(rss_file),
                                     *NSB, *case.argv], cwd=directory,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                                    start_new_session=True)
            killed = threading.Event()

            def guard():
                killed.set()
                os.killpg(proc.pid, 9)

            timer = threading.Timer(HANG_GUARD_S, guard)
            timer.start()
            proc.wait()
            timer.cancel()
            out.seek(0)
            err.seek(0)
            max_rss_kb = int(rss_file.read_text()) if rss_file.exists() else 0
            return Outcome(None if killed.is_set() else proc.returncode, out.read(), err.read(),
                           max_rss_kb / 1024, time.monotonic() - started)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def build(case: Case, directory: Path) -> None:
    """Copy the samples into ``directory`` and apply the case's mutation."""
    shutil.copy(ROOT / "samples/tc_testpmd_netns_rfc2544.yaml", directory / NSB_TASK)
    shutil.copytree(ROOT / "samples/prox", directory / "prox")
    case.mutate(directory)


# --- helpers -------------------------------------------------------------------

def _append(relative: str, text: str | bytes) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        path = d / relative
        data = text.encode() if isinstance(text, str) else text
        path.write_bytes(path.read_bytes() + data)
    return mutate


def _replace(relative: str, old: str, new: str | bytes) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        path = d / relative
        content = path.read_bytes()
        assert old.encode() in content, (relative, old)
        replacement = new.encode() if isinstance(new, str) else new
        path.write_bytes(content.replace(old.encode(), replacement, 1))
    return mutate


def _write(relative: str, text: str | bytes) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        (d / relative).parent.mkdir(parents=True, exist_ok=True)
        data = text.encode() if isinstance(text, str) else text
        (d / relative).write_bytes(data)
    return mutate


def _symlink(relative: str, target: str) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        path = d / relative
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)
    return mutate


def _fifo(relative: str) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        path = d / relative
        if path.exists():
            path.unlink()
        os.mkfifo(path)
    return mutate


def _both(*mutations: Callable[[Path], None]) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        for one in mutations:
            one(d)
    return mutate


def _laughs(levels: int = 9) -> str:
    lines = ['lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels + 1):
        refs = ", ".join([f"*l{n - 1}"] * 9)
        lines.append(f"lol{n}: &l{n} [{refs}]")
    return "\n" + "\n".join(lines) + "\n"


def _deep_block(depth: int) -> str:
    return "\ndeep:\n" + "".join("  " * i + f"k{i}:\n" for i in range(depth)) + \
        "  " * depth + "end\n"


def _deep_flow(depth: int) -> str:
    return "\ndeep: " + "[" * depth + "]" * depth + "\n"


VALIDATE = ["task", "validate"]
DRY = ["task", "start", "--dry-run"]

# Where the text of each kind of file can be mutated.
FILES = {
    "task": NSB_TASK,
    "ys-task": YS_TASK,
    "pod": "prox/pod.yaml",
    "topology": "prox/prox-tg-topology.yaml",
    "profile": "prox/prox_binsearch.yaml",
    "descriptor": "prox/vnf_descriptors/prox_router.yaml",
}


def _task_for(kind: str) -> str:
    return NSB_TASK if kind == "task" else YS_TASK


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append

    # resource bombs in every kind of file
    for kind, rel in FILES.items():
        task = _task_for(kind)
        name = Path(rel).name
        add(Case(f"billion-laughs-{kind}", VALIDATE + [task], _append(rel, _laughs()), name))
        add(Case(f"alias-cycle-{kind}", VALIDATE + [task],
                 _append(rel, "\nloop: &loop [1, *loop]\n"), name))
        add(Case(f"deep-block-{kind}", VALIDATE + [task], _append(rel, _deep_block(3000)), name))
        add(Case(f"deep-flow-{kind}", VALIDATE + [task], _append(rel, _deep_flow(100_000)), name))
        add(Case(f"dev-zero-{kind}", VALIDATE + [task], _symlink(rel, "/dev/zero"), name))
        add(Case(f"fifo-{kind}", VALIDATE + [task], _fifo(rel), name))
        add(Case(f"symlink-loop-{kind}", VALIDATE + [task],
                 _both(_symlink(rel, name + ".loop"), _symlink(rel + ".loop", name)), name))
        add(Case(f"directory-{kind}", VALIDATE + [task],
                 _both(lambda d, rel=rel: (d / rel).unlink(),
                       lambda d, rel=rel: (d / rel).mkdir()), name))
        add(Case(f"non-utf8-{kind}", VALIDATE + [task], _append(rel, b"\n# caf\xe9\xff\n"), name))
        add(Case(f"nul-char-{kind}", VALIDATE + [task], _append(rel, b"\nx: a\x00b\n"), name))
        add(Case(f"control-char-{kind}", VALIDATE + [task], _append(rel, b"\nx: a\x07b\n"), name))
        add(Case(f"huge-int-{kind}", VALIDATE + [task], _append(rel, "\nx: " + "9" * 5000 + "\n"),
                 name))
        add(Case(f"big-list-{kind}", VALIDATE + [task],
                 _append(rel, "\nbig:\n" + "- 12345678901234567890123456789012345678901\n"
                         * 120_000), name))
        keys = ("true", "null", "[1, 2]") + (("1",) if kind == "task" else ())
        for key in keys:
            add(Case(f"key-{key}-{kind}", VALIDATE + [task],
                     _append(rel, f"\n? {key}\n: value\n"), name))
        add(Case(f"duplicate-key-{kind}", VALIDATE + [task],
                 _append(rel, "\nzz_dup: 1\nzz_dup: 2\n"), name))
        add(Case(f"nan-{kind}", VALIDATE + [task], _append(rel, "\nzz_nan: .nan\n"), name))

    # Jinja2 bombs and runtime errors, in the nsb task and in a referenced profile
    jinja = {
        "lipsum": "{{ lipsum(1000000) }}",
        "power-tower": "{{ ((99 ** 99) ** 99) ** 99 }}",
        "power-big": "{{ 10 ** 1000000 }}",
        "product-big": "{{ (10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000) }}",
        "concat-doubling": "{% set ns = namespace(s='x') %}{% for i in range(64) %}"
                           "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "replace-grow": "{{ ('x' * 10000) | replace('', 'y' * 10000) }}",
        "replace-method": "{{ ('x' * 10000).replace('', 'y' * 10000) }}",
        "nested-range": "{% for i in range(100000) %}{% for j in range(100000) %}"
                        "{% endfor %}{% endfor %}",
        "str-repeat": "{{ 'x' * 10 ** 9 }}",
        "list-repeat": "{{ [1] * 10 ** 9 }}",
        "str-repeat-chain": "{{ ('x' * 100000) * 100000 }}",
        "range-huge": "{{ range(10 ** 9) | list }}",
        "center": "{{ 'x'.center(10 ** 9) }}",
        "center-filter": "{{ 'x' | center(10 ** 9) }}",
        "indent": "{{ 'x\ny' | indent(10 ** 9) }}",
        "format-width": "{{ '%1000000000s' | format('x') }}",
        "include": "{% include 'other.yaml' %}",
        "import": "{% import 'other.yaml' as o %}",
        "extends": "{% extends 'other.yaml' %}",
        "div-zero": "{{ 1 / 0 }}",
        "pop-empty": "{{ [].pop() }}",
        "recursive-macro": "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
        "recursive-loop": "{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}",
        "undefined": "{{ no_such_variable }}",
        "attribute": "{{ ''.__class__.__mro__ }}",
        "unclosed": "{% if true %}",
    }
    for name, snippet in jinja.items():
        add(Case(f"jinja-{name}-task", VALIDATE + [NSB_TASK],
                 _append(NSB_TASK, f"\n# {snippet}\n"), NSB_TASK))
        add(Case(f"jinja-{name}-profile", VALIDATE + [YS_TASK],
                 _append(FILES["profile"], f"\n# {snippet}\n"), "prox_binsearch.yaml"))

    # file arguments that are not files
    add(Case("task-is-dev-zero", VALIDATE + ["/dev/zero"], names="/dev/zero"))
    add(Case("task-missing", VALIDATE + ["nope.yaml"], names="nope.yaml"))
    add(Case("task-args-file-dev-zero", VALIDATE + [NSB_TASK, "--task-args-file", "/dev/zero"],
             names="/dev/zero"))
    add(Case("task-args-file-fifo", VALIDATE + [NSB_TASK, "--task-args-file", "args.yaml"],
             _fifo_new("args.yaml"), "args.yaml"))
    add(Case("task-args-file-non-utf8", VALIDATE + [NSB_TASK, "--task-args-file", "args.yaml"],
             _write("args.yaml", b"duration_s: \xff\n"), "args.yaml"))
    add(Case("task-args-file-bad-yaml", VALIDATE + [NSB_TASK, "--task-args-file", "args.yaml"],
             _write("args.yaml", "a: [1, 2\nb: 3\n"), "args.yaml"))
    add(Case("task-args-file-laughs", VALIDATE + [NSB_TASK, "--task-args-file", "args.yaml"],
             _write("args.yaml", _laughs()), "args.yaml"))
    add(Case("task-args-file-list", VALIDATE + [NSB_TASK, "--task-args-file", "args.yaml"],
             _write("args.yaml", "- 1\n"), "args.yaml"))
    add(Case("config-dev-zero", ["--config-file", "/dev/zero"] + VALIDATE + [NSB_TASK],
             names="/dev/zero"))
    add(Case("config-non-utf8", ["--config-file", "nsb.conf"] + VALIDATE + [NSB_TASK],
             _write("nsb.conf", b"[DEFAULT]\nresults_dir = \xff\n"), "nsb.conf"))
    add(Case("config-garbage", ["--config-file", "nsb.conf"] + VALIDATE + [NSB_TASK],
             _write("nsb.conf", "this is not ini\n"), "nsb.conf"))
    add(Case("config-unknown", ["--config-file", "nsb.conf"] + VALIDATE + [NSB_TASK],
             _write("nsb.conf", "[DEFAULT]\nno_such_option = 1\n"), "no_such_option"))
    add(Case("config-url-secret", ["--config-file", "nsb.conf"] + DRY + [NSB_TASK],
             _both(_write("nsb.conf", f"[influxdb]\nurl = ftp://admin:{SECRET}@db:8086\n"),
                   _replace(NSB_TASK, "  - type: file", "  - type: influxdb")),
             "url", secrets=(SECRET,)))

    # task args: malformed, deep, injection, bad numbers
    bad_args = {
        "not-json": "{duration_s: 5",
        "not-object": "[1, 2]",
        "deep": "[" * 50_000 + "]" * 50_000,
        "deep-object": '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}",
        "surrogate": '{"forward_mode": "\\ud800"}',
        "nul": '{"forward_mode": "io\\u0000x"}',
        "huge-int": '{"duration_s": ' + "9" * 5000 + "}",
        "nan": '{"duration_s": NaN}',
        "infinity": '{"duration_s": Infinity}',
        "injection-newline": '{"forward_mode": "io\\n          testpmd_path: /bin/true"}',
        "injection-flow": '{"packet_sizes": "[64], zz: 1"}',
        "nested-dict": '{"flows": {"a": 1}}',
    }
    for name, value in bad_args.items():
        add(Case(f"task-args-{name}", DRY + [NSB_TASK, "--task-args", value], names=None))

    # wrong values in the nsb task
    add(Case("duration-nan", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, '{{ duration_s | default(2) }}', ".nan"), "duration"))
    add(Case("loss-inf", VALIDATE + [NSB_TASK], _replace(NSB_TASK, "tolerated_loss: 0.01",
                                                         "tolerated_loss: .inf"), "tolerated_loss"))
    add(Case("loss-nan", VALIDATE + [NSB_TASK], _replace(NSB_TASK, "tolerated_loss: 0.01",
                                                         "tolerated_loss: .NaN"), "tolerated_loss"))
    add(Case("duplicate-context", VALIDATE + [NSB_TASK],
             _append(NSB_TASK, "\ncontext: {type: netns}\n"), "context"))
    add(Case("duplicate-interface", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, "interfaces: {xe0: {type: {{ link }}}, xe1: {type: {{ link }}}}",
                      "interfaces: {xe0: {}, xe1: {}, xe0: {}}"), "xe0"))
    add(Case("duplicate-option", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, "cores: 1", "cores: 1\n          cores: 2"), "cores"))
    add(Case("duplicate-vnf-name", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, "name: tg0", "name: testpmd0"), "testpmd0"))
    add(Case("nul-in-path", VALIDATE + [YS_TASK],
             _replace(YS_TASK, "prox_binsearch.yaml", '"prox_bin\\0search.yaml"'),
             "traffic_profile"))
    add(Case("profile-undefined-var", VALIDATE + [YS_TASK],
             _replace(FILES["profile"], "lower_bound: 0.0", "lower_bound: {{ nope }}"),
             "prox_binsearch.yaml"))
    add(Case("profile-directory", VALIDATE + [YS_TASK],
             _replace(YS_TASK, "traffic_profile: prox_binsearch.yaml",
                      "traffic_profile: configs"), "traffic_profile"))

    # wrong types in Yardstick files
    topo = FILES["topology"]
    add(Case("topology-vld-dict", VALIDATE + [YS_TASK],
             _replace(topo, "        vld:", "        vld: {}\n        old_vld:"), "vld"))
    add(Case("topology-member-index-list", VALIDATE + [YS_TASK],
             _replace(topo, "member-vnf-index: '1'", "member-vnf-index: [1]"),
             "member-vnf-index"))
    add(Case("topology-model-int", VALIDATE + [YS_TASK],
             _replace(topo, "VNF model: vnf_descriptors/prox_tg.yaml", "VNF model: 7"),
             "VNF model"))
    add(Case("topology-cp-ref-int", VALIDATE + [YS_TASK],
             _replace(topo, "vnfd-connection-point-ref: xe0", "vnfd-connection-point-ref: 0"),
             "vnfd-connection-point-ref"))
    add(Case("pod-nodes-dict", VALIDATE + [YS_TASK],
             _replace(FILES["pod"], "nodes:\n-", "nodes: {}\nold:\n-"), "nodes"))
    add(Case("pod-interfaces-list", VALIDATE + [YS_TASK],
             _replace(FILES["pod"], "    interfaces:\n        xe0:",
                      "    interfaces: [1]\n    old:\n        xe0:"), "interfaces",
             mistakes=2))  # a list for interfaces, and old: an unknown key
    add(Case("pod-key-nosuchuser", DRY + [YS_TASK],
             _replace(FILES["pod"], "key_filename: ~/.ssh/id_ed25519",
                      "key_filename: ~nosuchuser/.ssh/id"), "key_filename"))
    add(Case("pod-ssh-port-0", VALIDATE + [YS_TASK],
             _replace(FILES["pod"], "ssh_port: 22", "ssh_port: 0"), "ssh_port"))
    add(Case("pod-password-int", VALIDATE + [YS_TASK],
             _replace(FILES["pod"], "user: root", "user: root\n    password: 73519826"),
             "password", secrets=("73519826",)))
    add(Case("pod-password-list", VALIDATE + [YS_TASK],
             _replace(FILES["pod"], "user: root", f"user: root\n    password: [{SECRET}]"),
             "password", secrets=(SECRET,)))
    add(Case("output-url-secret", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, "  - type: file",
                      f"  - type: influxdb\n    url: gopher://admin:{SECRET}@db:8086"),
             "url", secrets=(SECRET,)))
    add(Case("output-token-int", VALIDATE + [NSB_TASK],
             _replace(NSB_TASK, "  - type: file",
                      "  - type: influxdb\n    url: http://db:8086\n    token: 73519826"),
             "token", secrets=("73519826",)))

    # other commands with hostile input
    add(Case("inventory-to-directory", ["ansible", "inventory", "prox/pod.yaml", "-o", "prox"],
             names="prox"))
    add(Case("inventory-pod-laughs", ["ansible", "inventory", "prox/pod.yaml"],
             _append(FILES["pod"], _laughs()), "pod.yaml"))
    add(Case("node-check-pod-fifo", ["node", "check", "prox/pod.yaml"],
             _fifo(FILES["pod"]), "pod.yaml"))
    add(Case("push-url-secret", ["results", "push", "abc", "--results-dir", "res", "--url",
                                  f"ftp://u:{SECRET}@h"], _results("abc", {"status": "done"}),
             secrets=(SECRET,)))
    add(Case("push-damaged-target", ["results", "push", "abc", "--results-dir", "res"],
             _both(_results("abc", {"status": "done"}),
                   _write("res/abc/influxdb.spool.target.json", "{not json"),
                   _write("res/abc/influxdb.spool.lp", "m f=1 1\n")), "target"))
    for name, doc in {
        "deep": "[" * 100_000 + "]" * 100_000,
        "wrong-types": json.dumps({"task": 5, "status": [], "results": "x"}),
        "wrong-results": json.dumps({"task": {}, "status": "done", "results": [{"x": 1}]}),
        "non-utf8": b"\xff\xfe",
    }.items():
        for fmt in ("text", "csv"):
            add(Case(f"report-{name}-{fmt}", ["report", "table", "abc", "--results-dir", "res",
                                              "--format", fmt],
                     _write("res/abc/results.json", doc), "results.json"))
    return out


def _fifo_new(relative: str) -> Callable[[Path], None]:
    return lambda d: os.mkfifo(d / relative)


def _results(task_id: str, doc: dict) -> Callable[[Path], None]:
    return _write(f"res/{task_id}/results.json", json.dumps(doc))


# --- every field given the wrong type --------------------------------------------

WRONG_TYPES = ("[1]", "{a: 1}", "null")
_FIELD = re.compile(r"^(\s*-?\s*)([A-Za-z_][\w\- ]*):\s*(\S.*)?$")
TYPED_FILES = [NSB_TASK, YS_TASK, *(FILES[k] for k in ("pod", "topology", "profile")),
               "prox/vnf_descriptors/prox_router.yaml", "prox/vnf_descriptors/prox_tg.yaml"]


def field_mutations(relative: str, directory: Path) -> list[tuple[int, str, str]]:
    """(line number, original line, mutated text of the file) for every ``key: value``
    line of ``relative`` and every wrong type."""
    lines = (directory / relative).read_text().splitlines()
    out = []
    for index, line in enumerate(lines):
        match = _FIELD.match(line)
        if not match or line.strip().startswith("#"):
            continue
        for wrong in WRONG_TYPES:
            mutated = lines[:index] + [f"{match.group(1)}{match.group(2)}: {wrong}"] + \
                lines[index + 1:]
            out.append((index + 1, line.strip(), "\n".join(mutated) + "\n"))
    return out
