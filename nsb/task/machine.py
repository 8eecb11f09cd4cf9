"""What this machine has, for task templates (``{{ machine.trex_path }}``,
``{{ machine.cpus }}``).

The lab samples run on this machine and pick their generator by what is here:
TRex where it is installed, trafgen (which needs only the kernel) otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

TREX_DEFAULT_PATH = "/opt/nsb_bin/trex/scripts"  # NSB's trex_path
TREX_ENV = "NSB_TREX_PATH"
TREX_SERVER_FILES = ("t-rex-64", "_t-rex-64", "trex-cfg")


def trex_default_path() -> str:
    """``NSB_TREX_PATH``, else NSB's ``/opt/nsb_bin/trex/scripts``."""
    return os.environ.get(TREX_ENV) or TREX_DEFAULT_PATH


def trex_path() -> str:
    """The TRex install on this machine ('' if none)."""
    path = trex_default_path()
    return path if all((Path(path) / name).exists() for name in TREX_SERVER_FILES) else ""


def template_values() -> dict:
    """``trex_path`` (see above) and ``cpus``, the CPUs this machine has (a lab sample
    on fewer than 4 shares them between its generator and its DUT)."""
    return {"trex_path": trex_path(), "cpus": os.cpu_count() or 1}
