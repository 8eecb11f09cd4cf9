"""Why PROX exited, in one line of its own log.

PROX's log ends in a backtrace or DPDK's usage text when it fails to start; the
line that says why comes before them: an EAL error ("EAL: lcore 2 unavailable"),
or the last error before "PANIC in ...". Lines PROX prints on every af_packet
port without consequence are not reasons.
"""

from __future__ import annotations

import re

_HARMLESS = re.compile(r"stats_mapping\(\) failed|set_mtu\(\) failed|numa_node|"
                       r"Error in rte_eal_init")
_EAL = re.compile(r"EAL: (lcore \d+ unavailable|.*(Error|FATAL|[Cc]annot|[Ii]nvalid|failed))")
_ERROR = re.compile(r"error|fail|cannot|will not fit|too many|invalid|not found|unknown|"
                    r"out of range|not enough", re.IGNORECASE)


def exit_reason(log: str) -> str:
    """The line of ``log`` that says why PROX stopped ('' if none does)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    panic = next((i for i, line in enumerate(lines) if line.startswith("PANIC in")), None)
    for line in lines[:panic]:
        if _EAL.search(line):
            return line
    before = lines[:panic] if panic is not None else lines
    for line in reversed(before):
        if _ERROR.search(line) and not _HARMLESS.search(line):
            return line
    return lines[panic] if panic is not None else ""
