"""What the trends keep between runs, in ``<results_dir>/.trend-cache`` (safe to delete):
each run's answers as the trends read them, and each test's jumpavg state.

A run's answers are read again when its results.json is another file or was written
since (size, times, inode). A test's state is used when the runs it was made from are
the first of the test's runs now (a digest over each run's task id and value, run by
run) and no new run is above its largest value; a run changed, removed or added before
the newest makes it count from the first run again. A cache that cannot be read, was
written by another version, or does not match its own checksum is counted anew too
(said at debug level): what is kept only saves time, it never changes an answer.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from nsb import __version__
from nsb.report import trend_groups

LOG = logging.getLogger(__name__)
FOLDER = ".trend-cache"
FORMAT = 3  # of both files; a change of what they hold or mean changes it (2: stateful
# answers are points of their own tests, in their own unit; 3: so are the answers of
# tests under change)


def folder(results_dir: Path) -> Path:
    return Path(results_dir) / FOLDER


def _write(path: Path, write: Callable) -> None:
    """Through a temporary file of this process and a rename: a reader sees a whole
    file or none; a directory nsb cannot write to keeps nothing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            os.fchmod(handle, 0o666 & ~_umask())  # as readable as the results beside it
            with os.fdopen(handle, "wb") as out:
                write(out)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as exc:
        LOG.debug("trend cache not kept: %s: %s", path, exc.strerror or exc)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class RunIndex:
    """Each run's answers (as lists, see nsb.report.trend) by task id, read from its
    results.json only when that file is new or was written since."""

    def __init__(self, results_dir: Path | None):
        self.path = folder(results_dir) / "runs.json" if results_dir is not None else None
        self.runs: dict[str, dict] = {}
        self.changed = False
        if self.path is not None and self.path.exists():
            self.runs = self._read()

    def _read(self) -> dict[str, dict]:
        """The kept runs: a header line (version, the body's checksum), then the body."""
        try:
            header, _, body = self.path.read_bytes().partition(b"\n")
            head = json.loads(header)
            if head.get("format") != FORMAT or head.get("nsb") != __version__:
                raise ValueError("written by another version")
            if head.get("sha256") != hashlib.sha256(body).hexdigest():
                raise ValueError("damaged")
            runs = json.loads(body)
            if not all(isinstance(entry["stat"], list) and isinstance(entry["answers"], list)
                       for entry in runs.values()):
                raise ValueError("not an index of runs")
            return runs
        except Exception as exc:  # noqa: BLE001  (any damage: every run is read again)
            LOG.debug("trend cache %s not used (%s): reading every run", self.path, exc)
            self.changed = True
            return {}

    def answers(self, task_id: str, path: str, read: Callable[[str, str], list]
                ) -> list | None:
        """The run's answers: kept ones while its file is the same, else ``read``'s;
        None when it has no results.json or it cannot be read (then it is tried again
        next time)."""
        try:
            st = os.stat(path)
        except OSError:
            if self.runs.pop(task_id, None) is not None:
                self.changed = True
            return None
        stat = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        kept = self.runs.get(task_id)
        if kept is not None and kept["stat"] == stat:
            return kept["answers"]
        try:
            answers = read(task_id, path)
        except Exception as exc:  # noqa: BLE001  (a damaged run is no point of any trend)
            LOG.debug("%s not read: %s", path, exc)
            self.runs.pop(task_id, None)
            self.changed = True
            return None
        self.runs[task_id] = {"stat": stat, "answers": answers}
        self.changed = True
        return answers

    def save(self, present: set[str]) -> None:
        """Keep the runs that are still there (``present``: every task id found)."""
        gone = set(self.runs) - present
        for task_id in gone:
            del self.runs[task_id]
        if self.path is None or not (self.changed or gone):
            return
        body = json.dumps(self.runs, separators=(",", ":")).encode()
        header = json.dumps({"format": FORMAT, "nsb": __version__,
                             "sha256": hashlib.sha256(body).hexdigest()}).encode()
        _write(self.path, lambda out: out.write(header + b"\n" + body))


def digests(ids: Sequence[str], runs: Sequence[trend_groups.Run]) -> np.ndarray:
    """A digest of each run with all runs before it (the runs a state was made from)."""
    found = np.zeros(len(runs), np.uint64)
    last = b""
    for k, (task_id, run) in enumerate(zip(ids, runs, strict=True)):
        value = repr(run if isinstance(run, float) else tuple(run))
        last = hashlib.blake2b(last + f"{task_id}\0{value}".encode(), digest_size=8).digest()
        found[k] = int.from_bytes(last, "little")
    return found


class GroupStore:
    """Each test's jumpavg state, one file per test (None: nothing is kept)."""

    def __init__(self, results_dir: Path | None):
        self.folder = folder(results_dir) / "groups" if results_dir is not None else None

    def groups(self, test: tuple, ids: Sequence[str], runs: Sequence) -> list:
        """jumpavg's groups of ``runs`` (the test's counted runs, ``ids`` their task
        ids), from the kept state where it fits (see the module's docstring)."""
        now = digests(ids, runs)
        kept, why = self._load(test)
        if kept is not None:
            state, made_from = kept
            common = min(state.runs, len(runs))
            if not common or made_from[common - 1] != now[common - 1]:
                why = "a run before the newest was added, changed or removed"
            elif len(runs) < state.runs:  # an earlier point of the history
                if trend_groups.max_value(runs) == state.max_value:
                    return trend_groups.groups(state, runs, upto=len(runs) - 1)
                LOG.debug("trend of %s up to an earlier run counted from the first run: its "
                          "largest run is not the kept state's (which is kept)", test)
                return trend_groups.groups(trend_groups.classify(runs), runs)
            elif trend_groups.fits(state, runs):
                if len(runs) > state.runs:
                    state = trend_groups.classify(runs, state)
                    self._save(test, state, now)
                return trend_groups.groups(state, runs)
            else:
                why = "a new run is above the largest before it"
        if why:
            LOG.debug("trend of %s counted from the first run: %s", test, why)
        state = trend_groups.classify(runs)
        self._save(test, state, now)
        return trend_groups.groups(state, runs)

    def _path(self, test: tuple) -> Path:
        name = hashlib.sha256(json.dumps(list(test)).encode()).hexdigest()[:32]
        return self.folder / f"{name}.npz"

    def _save(self, test: tuple, state: trend_groups.State, made_from: np.ndarray) -> None:
        if self.folder is None:
            return
        arrays = {**state.arrays(), "made_from": made_from[:state.runs]}
        meta = _meta(test, state)
        arrays["meta"] = np.array(json.dumps({**meta, "checksum": _checksum(meta, arrays)}))
        _write(self._path(test), lambda out: np.savez(out, **arrays))

    def _load(self, test: tuple) -> tuple[tuple | None, str]:
        """The kept state and the digests of its runs, or None and why not."""
        if self.folder is None:
            return None, ""
        path = self._path(test)
        if not path.exists():
            return None, ""
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files}
            meta = json.loads(str(arrays.pop("meta")))
            checksum = meta.pop("checksum")
            state = trend_groups.State(float(meta["max_value"]), int(meta["runs"]),
                                       best_bits=float(meta["best_bits"]))
            if _text(meta) != _text(_meta(test, state)) or checksum != _checksum(meta, arrays):
                raise ValueError("another test's, another version's or damaged")
            expected = {name: getattr(state, name).dtype for name in trend_groups.ARRAYS}
            for name, dtype in {**expected, "made_from": np.dtype(np.uint64)}.items():
                if arrays[name].shape != (state.runs,) or arrays[name].dtype != dtype:
                    raise ValueError(f"{name} is not {state.runs} values")
            for name in trend_groups.ARRAYS:
                setattr(state, name, arrays[name].copy())
            return (state, arrays["made_from"]), ""
        except Exception as exc:  # noqa: BLE001  (any damage: counted from the first run)
            return None, f"{path} not used ({exc})"


def _meta(test: tuple, state: trend_groups.State) -> dict:
    return {"format": FORMAT, "jumpavg": _jumpavg_version(), "test": list(test),
            "runs": state.runs, "max_value": state.max_value, "best_bits": state.best_bits}


def _text(meta: dict) -> str:
    return json.dumps(meta, sort_keys=True)


@functools.cache
def _jumpavg_version() -> str:
    """The grouping is jumpavg's: another version may count other bits."""
    from importlib import metadata

    try:
        return metadata.version("jumpavg")
    except metadata.PackageNotFoundError:
        return "?"


def _checksum(meta: dict, arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256(_text(meta).encode())
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()
