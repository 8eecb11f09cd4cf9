"""The shared libraries a program of this host loads, as its loader resolves them
(``ldd``): what a guest image or a container image must carry beside it."""

from __future__ import annotations

import subprocess


def of(program: str) -> list[str]:
    """The absolute paths ``ldd`` lists for ``program`` (the loader included), in its
    order; a library it cannot find ("not found") is not listed."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        part = line.split("=>")[-1].split("(")[0].strip()
        if part.startswith("/"):
            libs.append(part)
    return libs
