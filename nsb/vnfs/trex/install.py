"""Where TRex is installed, and its own STL client loaded from there.

TRex is not in Debian or PyPI: users install it as NSB's do
(``/opt/nsb_bin/trex/scripts``) or point ``NSB_TREX_PATH`` at a TRex scripts
directory. The Python client is TRex's own (``automation/trex_control_plane/
interactive``, or NSB's ``trex_client_lib``), imported from the install at run
time and never copied into nsb: it must match the server's version.
"""

from __future__ import annotations

import importlib
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType

import yaml  # noqa: F401 - loaded before TRex's client, which bundles an old one

from nsb.errors import PrerequisiteError
from nsb.task.machine import TREX_DEFAULT_PATH as DEFAULT_PATH
from nsb.task.machine import TREX_ENV as ENV
from nsb.task.machine import TREX_SERVER_FILES as SERVER_FILES
from nsb.task.machine import trex_default_path as default_path

CLIENT_SUBDIR = "automation/trex_control_plane/interactive"
# libraries nsb uses that TRex's client also bundles (and the directories it bundles)
SHARED_LIBRARIES = ("yaml",)
SHARED_BUNDLES = ("pyyaml-",)
_CLIENT_MODULE = "trex/stl/api.py"
_import_lock = threading.Lock()


__all__ = ["DEFAULT_PATH", "ENV", "SERVER_FILES", "default_path", "client_dir",
           "missing_server_files", "check_client", "load_stl_api"]


def client_dir(trex_path: str, client_lib: str | None) -> Path:
    """The directory holding TRex's ``trex`` package on this machine."""
    return Path(client_lib) if client_lib else Path(trex_path) / CLIENT_SUBDIR


def missing_server_files(executor, trex_path: str) -> list[str]:
    """Server files absent from ``trex_path`` on the generator's node."""
    listed = executor.run(["ls", "-1", trex_path], check=False)
    present = set(listed.stdout.split()) if listed.returncode == 0 else set()
    return [name for name in SERVER_FILES if name not in present]


def check_client(directory: Path) -> None:
    if not (directory / _CLIENT_MODULE).is_file():
        raise PrerequisiteError(
            f"TRex's Python client is not in {directory} (no {_CLIENT_MODULE}): set "
            f"options.trex_client_lib to the directory holding TRex's 'trex' package "
            f"(<trex>/{CLIENT_SUBDIR}), or install TRex at {DEFAULT_PATH} / set {ENV}")


def load_stl_api(directory: Path) -> ModuleType:
    """``trex.stl.api`` from ``directory`` (``load_api``)."""
    return load_api(directory, "trex.stl.api")


def load_api(directory: Path, module: str) -> ModuleType:
    """TRex's client ``module`` (``trex.stl.api``, ``trex.astf.api``) from ``directory``;
    it brings its own ZMQ and scapy, which it puts on sys.path itself. The same
    directory is used for every later client."""
    check_client(directory)
    with _import_lock:
        loaded = sys.modules.get(module) or sys.modules.get("trex.stl.api") \
            or sys.modules.get("trex.astf.api")
        if loaded is not None:
            origin = Path(loaded.__file__).resolve()
            if not origin.is_relative_to(directory.resolve()):
                raise PrerequisiteError(
                    f"TRex's client was already loaded from {origin.parents[2]}; one nsb "
                    f"process uses one TRex client (asked for {directory})")
            if loaded.__name__ == module:
                return loaded
        if str(directory) not in sys.path:
            sys.path.insert(0, str(directory))
        ours = {name: loaded for name, loaded in sys.modules.items() if _shared(name)}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its bundled libraries' deprecations
                return importlib.import_module(module)
        except Exception as exc:
            raise PrerequisiteError(f"TRex's Python client in {directory} does not "
                                    f"import: {type(exc).__name__}: {exc}") from None
        finally:
            _keep_ours(ours)


def _shared(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in SHARED_LIBRARIES)


def _keep_ours(ours: dict) -> None:
    """TRex's client evicts loaded modules named like its bundled libraries and puts
    its copies first on sys.path (PyYAML 3.11): nsb's stay nsb's. TRex's modules keep
    the copies they imported."""
    for name in [name for name in sys.modules if _shared(name)]:
        del sys.modules[name]
    sys.modules.update(ours)
    sys.path[:] = [entry for entry in sys.path
                   if not any(f"/{bundled}" in entry for bundled in SHARED_BUNDLES)]
