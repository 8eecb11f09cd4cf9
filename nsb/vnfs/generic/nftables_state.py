"""nsb's nftables tables and conntrack settings on one node: loaded in one nft
transaction over the node's executor, and given back (the tables deleted, every
sysctl as it was). The way back is also a shell script, for the node's ledger."""

from __future__ import annotations

import json
import logging
import shlex

from nsb.errors import RunError
from nsb.executors.base import CommandResult, Executor

LOG = logging.getLogger(__name__)


class NftablesNode:
    """``load`` the ruleset ``text`` (which makes ``tables``), ``save`` then ``apply``
    the sysctl ``settings``; ``restore`` undoes what was done, safe to call again."""

    def __init__(self, executor: Executor, text: str, tables: list[tuple[str, str]],
                 settings: dict[str, str]):
        self.executor = executor
        self.text = text
        self.tables = tables  # (family, name)
        self.settings = settings  # sysctl -> value to set
        self.saved: dict[str, str] = {}  # sysctl -> its value before
        self.loaded = False

    def check(self) -> CommandResult:
        """nft's check of the ruleset (``nft -c``: the kernel validates, nothing changes)."""
        return self.executor.run(["nft", "-c", "-f", "-"], input=self.text, check=False)

    def load(self) -> CommandResult:
        """One transaction: all of it is loaded, or (failed) none of it."""
        done = self.executor.run(["nft", "-f", "-"], input=self.text, check=False)
        self.loaded = done.returncode == 0
        return done

    def save(self) -> None:
        """The settings' values now (after ``load``: conntrack's sysctls exist once a
        ruleset that tracks connections is in)."""
        for key in self.settings:
            done = self.executor.run(["sysctl", "-n", key], check=False)
            if done.returncode:
                raise RunError(f"{self.executor.name}: cannot read {key}: "
                               f"{(done.stderr or done.stdout).strip()} (its kernel has no such "
                               "conntrack setting)")
            self.saved[key] = done.stdout.strip()

    def apply(self) -> None:
        for key, value in self.settings.items():
            done = self.executor.run(["sysctl", "-qw", f"{key}={value}"], check=False)
            if done.returncode:
                raise RunError(f"{self.executor.name}: cannot set {key}={value}: "
                               f"{(done.stderr or done.stdout).strip()}")

    def writable(self, key: str) -> bool | None:
        """Whether sysctl ``key`` may be set here (None: it does not exist yet)."""
        path = "/proc/sys/" + key.replace(".", "/")
        there = self.executor.run(["test", "-e", path], check=False).returncode == 0
        if not there:
            return None
        return self.executor.run(["test", "-w", path], check=False).returncode == 0

    def present_tables(self) -> set[tuple[str, str]]:
        """The tables on the node now."""
        done = self.executor.run(["nft", "-j", "list", "tables"])
        try:
            listed = json.loads(done.stdout or "{}").get("nftables", [])
        except (json.JSONDecodeError, AttributeError):
            raise RunError(f"{self.executor.name}: cannot parse 'nft -j list tables'") from None
        return {(t["table"]["family"], t["table"]["name"]) for t in listed
                if isinstance(t, dict) and isinstance(t.get("table"), dict)}

    def restore_steps(self, every_table: bool = False) -> list[list[str]]:
        """The commands that give the node back: the tables deleted (those loaded, or
        ``every_table`` for the ledger, written before the load), the sysctls saved."""
        steps = [["nft", "delete", "table", family, name] for family, name in self.tables
                 if self.loaded or every_table]
        steps += [["sysctl", "-qw", f"{key}={value}"] for key, value in self.saved.items()]
        return steps

    def restore_script(self) -> str:
        """``restore_steps`` of everything as one POSIX shell script (every step runs)."""
        return "".join(f"{shlex.join(argv)} >/dev/null 2>&1\n"
                       for argv in self.restore_steps(every_table=True))

    def restore(self) -> None:
        for argv in self.restore_steps():
            done = self.executor.run(argv, check=False)
            if done.returncode:
                LOG.warning("%s: could not give back: %s: %s", self.executor.name,
                            " ".join(argv), (done.stderr or done.stdout).strip())
        self.loaded = False
        self.saved = {}
