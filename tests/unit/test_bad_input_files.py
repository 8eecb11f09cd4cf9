"""A generated corpus of bad files through the real commands: every file a task names
(pod, topology, VNF descriptors, traffic profile, PROX configs and Lua files, rules,
standalone host files) made a symlink loop, a directory, a FIFO, binary, not UTF-8 or
unreadable, or named with a NUL byte; output paths nsb cannot write; results files
of the wrong shape. Each is one ``nsb: error:`` line and exit 2, never a traceback."""

import errno
import os
import shutil
from pathlib import Path

import pytest

from nsb.task import input_file

REPO = Path(__file__).resolve().parents[2]
PROX = ("samples/prox", "tc_prox_l3fwd.yaml", '{"context": "netns"}')
VFW = ("samples/samplevnf", "tc_vfw_rfc2544.yaml", None)
STANDALONE = ("samples/standalone", "tc_testpmd_ovs_dpdk_pvp.yaml", None)
# (sample, a file it reads) for every kind of file a task names
NAMED_FILES = [
    (PROX, "pod.yaml"), (PROX, "prox-tg-topology.yaml"), (PROX, "prox_binsearch.yaml"),
    (PROX, "vnf_descriptors/prox_tg.yaml"), (PROX, "configs/handle_l3fwd-lab.cfg"),
    (PROX, "configs/gen_l3fwd-lab.cfg"), (PROX, "configs/ipv4-2port.lua"),
    (VFW, "vfw_rules.yaml"), (VFW, "vfw-topology.yaml"), (STANDALONE, "host_lab.yaml"),
]


def _loop(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.name + ".other")
    path.with_name(path.name + ".other").symlink_to(path.name)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _binary(path: Path) -> None:
    path.write_bytes(bytes(range(128)) * 8)  # valid UTF-8, but NUL and control bytes


def _latin1(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# caf\xe9\n")


BREAKS = {"symlink loop": _loop, "directory": _directory, "FIFO": _fifo, "binary": _binary,
          "not UTF-8": _latin1}


def _copy(tmp_path: Path, sample) -> Path:
    folder, task, _ = sample  # samples name each other's files (../trex/...)
    shutil.copytree(REPO / "samples", tmp_path / "samples", symlinks=True)
    return tmp_path / folder / task


def _dry_run(nsb_main, task: Path, sample):
    args = ["task", "start", "--dry-run", str(task)]
    if sample[2]:
        args += ["--task-args", sample[2]]
    return nsb_main(*args)


def assert_one_line(code, err, *expected):
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("nsb: error: "), (code, err)
    for text in expected:
        assert text in lines[0], lines[0]


@pytest.mark.parametrize("break_it", BREAKS, ids=list(BREAKS))
@pytest.mark.parametrize("sample,name", NAMED_FILES, ids=[n for _, n in NAMED_FILES])
def test_a_file_a_task_names_that_cannot_be_read_is_one_line(nsb_main, tmp_path, sample, name,
                                                             break_it):
    task = _copy(tmp_path, sample)
    code, _, err = _dry_run(nsb_main, task, sample)
    assert code == 0, err  # the sample itself is fine
    BREAKS[break_it](task.parent / name)
    code, _, err = _dry_run(nsb_main, task, sample)
    assert_one_line(code, err, Path(name).name)


@pytest.mark.parametrize("sample,name", NAMED_FILES, ids=[n for _, n in NAMED_FILES])
def test_a_file_without_read_permission_is_one_line(nsb_main, tmp_path, monkeypatch, sample,
                                                    name):
    """As a user without the permission sees it (root reads any file)."""
    task = _copy(tmp_path, sample)
    denied = str(task.parent / name)
    real_open = os.open

    def open_as_user(path, flags, *args, **kwargs):
        if os.fspath(path) == denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(input_file.os, "open", open_as_user)
    code, _, err = _dry_run(nsb_main, task, sample)
    assert_one_line(code, err, Path(name).name, "Permission denied")


# the text in the task naming a file, and a YAML double-quoted name with a NUL in its place
NUL_NAMES = [
    (PROX, "file: {{ pod | default(\"pod.yaml\") }}", 'file: "pod\\0.yaml"'),
    (PROX, "traffic_profile: prox_binsearch.yaml", 'traffic_profile: "prox\\0.yaml"'),
    (PROX, "topology: prox-tg-topology.yaml", 'topology: "topo\\0.yaml"'),
    (PROX, "prox_config: configs/handle_l3fwd{{ variant }}.cfg",
     'prox_config: "configs/h\\0.cfg"'),
    (PROX, 'configs/ipv4-2port.lua: ""', '"configs/i\\0.lua": ""'),
    (VFW, "rules: vfw_rules.yaml", 'rules: "vfw\\0rules.yaml"'),
]


@pytest.mark.parametrize("sample,written,nul", NUL_NAMES, ids=[n for _, _, n in NUL_NAMES])
def test_a_file_name_with_a_nul_byte_is_one_line(nsb_main, tmp_path, sample, written, nul):
    task = _copy(tmp_path, sample)
    text = task.read_text()
    assert written in text
    task.write_text(text.replace(written, nul))
    code, _, err = _dry_run(nsb_main, task, sample)
    assert_one_line(code, err, "NUL")
    assert "\0" not in err


def test_the_commands_that_only_read_accept_the_same_bad_files(nsb_main, tmp_path):
    task = _copy(tmp_path, PROX)
    _loop(task.parent / "pod.yaml")
    code, _, err = nsb_main("task", "validate", str(task), "--task-args", PROX[2])
    assert_one_line(code, err, "pod.yaml", "loop")
    code, _, err = nsb_main("ansible", "inventory", str(task.parent / "pod.yaml"))
    assert_one_line(code, err, "pod.yaml", "loop")
