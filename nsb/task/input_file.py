"""Reading the files users hand to nsb, with limits that hold before anything big.

Task, pod, topology, descriptor, profile, task-args and config files come from
other people's repositories: a FIFO must not hang the run, ``/dev/zero`` must
not fill memory, a symlink loop or bad bytes must end in one located line.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from nsb.errors import TaskError

MAX_INPUT_BYTES = 512 << 10  # 17 times the largest Yardstick sample; pure-Python YAML parses
# that in about 2 s (a results file is not input and has its own limit)
MAX_PATH_TEXT = 4096


def resolve(path: Path | str) -> Path:
    """An absolute path with symlinks resolved (files a file names are relative to
    where it really is); a path that is not a regular file keeps its own name, so
    that :func:`read_text` reports the name the user wrote."""
    if "\0" in str(path):  # no system call takes it: say so here, for every file named
        raise TaskError("a file name cannot contain a NUL byte", _shown(path))
    path = Path(path)
    try:
        resolved = path.resolve()
        if resolved.is_file():
            return resolved
    except (RuntimeError, OSError, ValueError):
        pass
    # not a readable file: keep the name the user gave, so the error names it
    return Path(os.path.abspath(path))


def check_path_text(value: object, error) -> str:
    """A path from a file must be text without NUL bytes; ``error(message)`` locates it."""
    if not isinstance(value, str) or not value:
        raise error(f"expected a file path, got {type(value).__name__}")
    if "\0" in value:
        raise error("a file path cannot contain a NUL byte")
    if len(value) > MAX_PATH_TEXT:
        raise error(f"a file path longer than {MAX_PATH_TEXT} characters")
    return value


def read_text(path: Path | str, shown: str | None = None,
              limit: int = MAX_INPUT_BYTES) -> str:
    """UTF-8 text of a regular file of at most ``limit`` bytes, or a TaskError naming it."""
    shown = _shown(shown or path)
    data = read_bytes(path, shown, limit)
    nul = data.find(b"\0")
    if nul >= 0:  # valid UTF-8, but no text file (config, YAML, Lua) holds one
        column = nul - data.rfind(b"\n", 0, nul)
        raise TaskError(f"a binary file, not text: a NUL byte at column {column}", shown,
                        data.count(b"\n", 0, nul) + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TaskError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column}",
                        shown, line) from None


def read_bytes(path: Path | str, shown: str | None = None,
               limit: int = MAX_INPUT_BYTES) -> bytes:
    shown = _shown(shown or path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except ValueError:
        raise TaskError("the file name contains a NUL byte", shown) from None
    except FileNotFoundError:
        raise TaskError("file not found", shown) from None
    except OSError as exc:
        raise TaskError(f"cannot read file: {_reason(exc)}", shown) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise TaskError("is a directory, not a file", shown)
        if not stat.S_ISREG(info.st_mode):
            raise TaskError(f"is a {_kind(info.st_mode)}, not a regular file; nsb reads "
                            "its input only from regular files", shown)
        if info.st_size > limit:
            raise TaskError(_too_big(info.st_size, limit), shown)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise TaskError(f"cannot read file: {_reason(exc)}", shown) from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise TaskError(_too_big(len(data), limit), shown)
    return data


def check_readable_dir(path: Path | str, what: str) -> None:
    """A directory nsb reads (the results history) that is there but cannot be
    listed or entered, such as another user's (``sudo -u`` keeps HOME): a TaskError
    naming it and why. One that is not there yet holds nothing: no error."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        reason = _reason(exc) if isinstance(exc, OSError) else "a NUL byte in its name"
        raise TaskError(f"cannot read {what}: {reason}", _shown(path)) from None
    effective = os.access in os.supports_effective_ids  # the user nsb runs as
    if stat.S_ISDIR(info.st_mode) and not os.access(path, os.R_OK | os.X_OK,
                                                    effective_ids=effective):
        raise TaskError(f"cannot read {what}: {os.strerror(errno.EACCES)}", _shown(path))


def _too_big(size: int, limit: int) -> str:
    return (f"is {size:,} bytes, more than the {_size(limit)} nsb accepts for an input "
            "file")


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    return exc.strerror or str(exc)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


# --- files and directories nsb is told to write (reports, exports, inventories) ---

def make_dir(path: Path | str) -> Path:
    """``path`` as a directory (made with its parents), or a TaskError saying why not."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except ValueError:
        raise TaskError("a directory name cannot contain a NUL byte", _shown(path)) from None
    except FileExistsError:
        raise TaskError("exists and is not a directory", _shown(path)) from None
    except OSError as exc:
        raise TaskError(f"cannot create the directory: {_reason(exc)}",
                        _shown(exc.filename or path)) from None
    return path


def write_text(path: Path | str, text: str) -> None:
    """Write ``text`` to a file the user named, or a TaskError saying why it cannot be."""
    shown = _shown(path)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except ValueError:
        raise TaskError("a file name cannot contain a NUL byte", shown) from None
    except IsADirectoryError:
        raise TaskError("is a directory; give a file name", shown) from None
    except FileNotFoundError:
        raise TaskError(f"cannot write: no directory {_shown(Path(path).parent)}",
                        shown) from None
    except OSError as exc:
        raise TaskError(f"cannot write: {_reason(exc)}", shown) from None


def absolute(path: Path | str) -> Path:
    """``path`` made absolute with symlinks resolved where they resolve (a loop or a
    missing file keeps the name as written)."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError, ValueError):
        return Path(os.path.abspath(path))


def _shown(path) -> str:
    """A path as one printable line (a NUL or newline in it would split the message)."""
    return repr(str(path))[1:-1] if any(c in str(path) for c in "\0\n\r") else str(path)
