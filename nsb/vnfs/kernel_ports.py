"""A generator's receiving kernel interfaces made sinks while it runs.

Frames a DUT forwards to the generator's own addresses would otherwise reach the
generator node's IP stack, which answers them (ICMP port unreachable, ARP,
IPv6 neighbour discovery) through the same ports: those answers cross the DUT
and count as received. The IPv4 addresses and IPv6 are given back afterwards.
"""

from __future__ import annotations

import json

from nsb.executors.base import Executor


class SilencedPorts:
    """The kernel interfaces ``names`` of a node without IPv4 addresses and IPv6."""

    def __init__(self, executor: Executor, names: list[str]):
        self.executor = executor
        self.names = sorted(set(names))
        self._removed: list[tuple[str, str]] = []  # (interface, address/prefix)
        self._ipv6_was_on: list[str] = []

    def silence(self) -> None:
        for name in self.names:
            shown = self.executor.run(["ip", "-j", "-4", "addr", "show", "dev", name],
                                      check=False).stdout
            for entry in json.loads(shown or "[]"):
                for info in entry.get("addr_info", []):
                    self._removed.append((name, f"{info['local']}/{info['prefixlen']}"))
            self.executor.run(["ip", "-4", "addr", "flush", "dev", name], check=False)
            key = f"net.ipv6.conf.{name}.disable_ipv6"
            now = self.executor.run(["sysctl", "-n", key], check=False).stdout.strip()
            if now == "0":
                self.executor.run(["sysctl", "-qw", f"{key}=1"], check=False)
                self._ipv6_was_on.append(name)

    def restore(self) -> None:
        for name, address in self._removed:
            self.executor.run(["ip", "addr", "add", address, "dev", name], check=False)
        for name in self._ipv6_was_on:
            self.executor.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=0"],
                              check=False)
        self._removed, self._ipv6_was_on = [], []
