"""Which received frames belong to the trial being measured.

Each trial's frames carry their own UDP destination port (``trial_port``), and
an nftables counter on the ingress hook of every receiving port (netdev family:
before any IP processing, whatever the frames' MAC addresses) counts exactly the
frames with that port. A frame a slow DUT delivers after its trial was judged
(a VM under TCG holds frames for seconds, a deep buffer drains late) then counts
for no trial, instead of as a received frame of the next one. Without ``nft`` on
the node the port's own counters are read instead (every frame it received).
"""

from __future__ import annotations

import json
import logging

from nsb.errors import RunError
from nsb.executors.base import Executor
from nsb.nodes import link_counters

LOG = logging.getLogger(__name__)

FIRST_PORT, PORTS = 20000, 20000  # trial destination ports 20000..39999


def trial_port(sequence: int) -> int:
    """The UDP destination port of the ``sequence``-th trial's frames."""
    return FIRST_PORT + sequence % PORTS


class TrialFrames:
    """Received-frame counts per port for the current trial, on one node."""

    def __init__(self, executor: Executor, ifnames: list[str], table: str):
        self.executor = executor
        self.ifnames = list(dict.fromkeys(ifnames))
        self.table = table
        self.chains = {name: f"rx{index}" for index, name in enumerate(self.ifnames)}
        self.by_port = False
        self._link_base: dict = {}

    @property
    def method(self) -> str:
        return ("frames with the trial's UDP port (nftables ingress counter)" if self.by_port
                else "every frame the port received (link counters)")

    def install(self, by_port: bool = True) -> None:
        """The table and one ingress chain per receiving port; link counters without nft
        (or when ``by_port`` is false)."""
        if not by_port:
            return
        if not self.executor.which("nft"):
            LOG.warning("%s: nft not found: received frames are the ports' own counters, so a "
                        "frame delivered after its trial counts in the next one (apt-get "
                        "install nftables)", self.executor.name)
            return
        chains = "".join(
            f'  chain {chain} {{ type filter hook ingress device "{ifname}" priority 0; '
            "policy accept; }\n" for ifname, chain in self.chains.items())
        self._nft(f"table netdev {self.table} {{\n{chains}}}\n")
        self.by_port = True

    def arm(self, port: int) -> None:
        """Count from zero the frames that carry ``port`` from now on."""
        if not self.by_port:
            self._link_base = link_counters.read(self.executor)
            return
        script = "".join(
            f"flush chain netdev {self.table} {chain}\n"
            f"add rule netdev {self.table} {chain} ip protocol udp udp dport {port} counter\n"
            for chain in self.chains.values())
        self._nft(script)

    def read(self) -> dict[str, int]:
        """Frames of this trial received so far, per port."""
        if not self.by_port:
            now = link_counters.read(self.executor)
            return {name: link_counters.delta(self._link_base, now, name, "rx_packets")
                    for name in self.ifnames}
        shown = self.executor.run(["nft", "-j", "list", "table", "netdev", self.table],
                                  timeout=10).stdout
        counts = dict.fromkeys(self.ifnames, 0)
        names = {chain: ifname for ifname, chain in self.chains.items()}
        try:
            for item in json.loads(shown)["nftables"]:
                rule = item.get("rule")
                if rule and rule.get("chain") in names:
                    for expression in rule.get("expr", []):
                        if "counter" in expression:
                            counts[names[rule["chain"]]] += expression["counter"]["packets"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{self.executor.name}: cannot read the nftables counters "
                           f"({exc})") from None
        return counts

    def remove(self) -> None:
        if self.by_port:
            self.executor.run(["nft", "delete", "table", "netdev", self.table], check=False)
            self.by_port = False

    def _nft(self, script: str) -> None:
        done = self.executor.run(["nft", "-f", "-"], input=script, check=False, timeout=10)
        if done.returncode != 0:
            raise RunError(f"{self.executor.name}: nft refused the trial counters: "
                           f"{(done.stderr or done.stdout).strip()}")
