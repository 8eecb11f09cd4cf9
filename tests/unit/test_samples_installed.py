"""The samples ship with the package: setup.cfg installs every samples/ directory
into <prefix>/share/nsb/samples, where `nsb task samples` finds them."""

from __future__ import annotations

import configparser
import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.doc_examples import ROOT


def data_files() -> dict[str, list[str]]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return {target: value.split() for target, value in parser["options.data_files"].items()}


def test_every_sample_file_is_installed():
    listed = data_files()
    for folder, _, files in os.walk(ROOT / "samples"):
        rel = Path(folder).relative_to(ROOT).as_posix()
        patterns = listed.get(f"share/nsb/{rel}", [])
        missing = [name for name in files
                   if not any(fnmatch.fnmatch(f"{rel}/{name}", p) for p in patterns)]
        assert not missing, f"setup.cfg [options.data_files] share/nsb/{rel} lacks {missing}"


def test_an_installed_package_lists_its_samples(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for tree in ("nsb", "samples"):
        shutil.copytree(ROOT / tree, source / tree,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(pip + ["wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                          str(tmp_path / "wheel"), str(source)], check=True, timeout=300,
                   capture_output=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    (wheel,) = (tmp_path / "wheel").glob("nsb-*.whl")
    subprocess.run(pip + ["--python", str(venv / "bin" / "python"), "install", "-q",
                          "--no-deps", str(wheel)], check=True, timeout=300,
                   capture_output=True)
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "from nsb.task import samples; "
         "d = samples.directory(); print(d); print(*(s.path for s in samples.find(d)))"],
        cwd=tmp_path, env={**os.environ, "NSB_SAMPLES": "",
                           "PYTHONPATH": str(_libraries(tmp_path / "libraries"))},
        check=True, capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert shown[0] == str(venv / "share" / "nsb" / "samples")
    assert "tc_testpmd_netns_rfc2544.yaml" in shown[1].split()
    assert "trex/tc_trex_testpmd_rfc2544.yaml" in shown[1].split()


def _libraries(into: Path) -> Path:
    """The libraries listing samples needs (descriptions are rendered templates), from
    this environment, for a venv that has nsb's wheel alone."""
    import importlib.util

    into.mkdir()
    for name in ("jinja2", "markupsafe", "yaml"):
        (package,) = importlib.util.find_spec(name).submodule_search_locations
        (into / name).symlink_to(package)
    return into
