"""A TRex stateless server on the generator's node: started as NSB starts it, ready
when its RPC port answers, stopped with everything it leaves behind.

TRex's launcher must run from its own directory (it calls ``./trex-cfg``), as root.
It stdio-buffers its log, so readiness is the RPC answer, never a log line; the
log is read only after TRex exited, to quote its own reason.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from nsb.errors import RunError
from nsb.executors.base import Executor, Process, tail
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry

LOG = logging.getLogger(__name__)

# TRex's lines that say why it stopped (its launcher, EAL, the memif PMD, the RPC thread)
_REASON = re.compile(r"ERROR|Error|error|[Ff]ailed|Could not|Cause:|already in use|"
                     r"[Nn]ot supported|[Cc]annot")
_NOT_REASONS = ("ERROR encountered while configuring TRex system",)
BIRD_DIR = "/tmp/trex-bird"


def command(trex_path: str, cfg_path: str, queues_per_port: int | None,
            extra_args: list[str]) -> list[str]:
    """NSB's ``cd <trex_path>; ./t-rex-64 -i --cfg <file> --no-scapy-server`` as an
    argument list (``env -C`` changes directory without a shell)."""
    argv = ["env", "-C", trex_path, "./t-rex-64", "-i", "--cfg", cfg_path,
            "--no-scapy-server", "--no-termio", "--iom", "0", "--hdrh"]
    if queues_per_port:
        argv += ["-c", str(queues_per_port)]
    return argv + list(extra_args)


def reason(log_text: str) -> str:
    """TRex's own words for why it did not start: its first error lines."""
    lines = [line.strip() for line in log_text.splitlines()]
    said = [line for line in lines if _REASON.search(line) and line not in _NOT_REASONS]
    picked = list(dict.fromkeys(said))[:2]
    return "; ".join(picked) or (tail(log_text, 3).replace("\n", "; ") or "no output")


REMOVE_PAGE_FILES = ('for m in $(awk \'$3 == "hugetlbfs" {print $2}\' /proc/mounts); do '
                     'rm -f "$m/$1"map_*; done')


class TrexServer:
    """One ``t-rex-64 -i`` process and its DPDK runtime dir."""

    def __init__(self, executor: Executor, argv: list[str], log_path: str, prefix: str,
                 name: str, read_log: Callable[[], str]):
        self.executor = executor
        self.argv = argv
        self.log_path = log_path
        self.prefix = prefix
        self.name = name
        self._log = read_log  # the log as the node has it (over SSH too)
        self.process: Process | None = None

    def start(self) -> None:
        self.process = self.executor.start(self.argv, log_path=self.log_path)

    def wait_ready(self, connect: Callable[[], object], timeout: float) -> object:
        """``connect()``'s client once TRex's RPC port answers; RunError quoting TRex if
        it exits first or does not answer within ``timeout``."""
        deadline = time.monotonic() + timeout
        last_error = ""
        while True:
            code = self.process.poll()
            if code is not None:
                raise RunError(f"{self.name}: TRex did not start (exit {code}): "
                               f"{reason(self._log())} (log: {self.log_path})")
            try:
                return connect()
            except Exception as exc:  # TRex's client raises its own TRexError
                last_error = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
            if time.monotonic() >= deadline:
                self.stop()
                raise RunError(f"{self.name}: TRex's RPC port did not answer within "
                               f"{timeout:g} s ({last_error}): {reason(self._log())} "
                               f"(log: {self.log_path})")
            time.sleep(0.5)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def died(self) -> str:
        """'' while TRex runs, else why it stopped (for an error between trials)."""
        if self.running():
            return ""
        code = self.process.poll() if self.process else None
        return (f"{self.name}: TRex exited (code {code}): {reason(self._log())} "
                f"(log: {self.log_path})")

    def stop(self) -> None:
        if self.process is not None:
            code = self.process.stop(grace_s=5.0)
            LOG.info("%s: TRex stopped (exit %s), log in %s", self.name, code, self.log_path)
            self.process = None
        dpdk_telemetry.remove_runtime_dir(self.executor, self.prefix)
        # its DPDK keeps its hugepages as files named after the prefix in the hugetlbfs
        # it found; stopped by SIGKILL (no exit within the grace), it leaves them taken
        self.executor.run(["sh", "-c", REMOVE_PAGE_FILES, "sh", self.prefix], check=False)
        # TRex's launcher makes this directory (for its BGP helper) at every start
        self.executor.run(["rmdir", "--ignore-fail-on-non-empty", BIRD_DIR], check=False)
