"""UDP_Replay (NSB's UdpReplayApproxVnf): every frame back out of the port it came
in on, MACs, addresses and UDP ports swapped; NSB's reflector beyond the DUT in
its correlated-traffic tests.

Started as NSB starts it: ``UDP_Replay --log-level=5 <EAL> -- --no-hw-csum -p
<mask> --config='(port,0,lcore),...'`` with the master on core 0 and a core per
port after it (``cores`` places them), prompt ``Replay>``.
"""

from __future__ import annotations

from nsb.vnfs.samplevnf import eal, options, stats
from nsb.vnfs.samplevnf.vnf import SampleVnf


class UdpReplayApproxVnf(SampleVnf):
    """SampleVNF UDP_Replay: reflects UDP frames (NSB's UdpReplayApproxVnf)."""

    OPTIONS_SCHEMA = options.UDP_REPLAY
    APP_NAME = "UDP_Replay"
    PROMPT = "Replay>"
    STATS_COMMAND = "UDP_Replay stats"

    def _core(self, nsb_core: int) -> int:
        placed = self.options.get("cores") or []
        return placed[min(nsb_core, len(placed) - 1)] if placed else nsb_core

    def port_cores(self) -> dict[int, int]:
        """Port -> the lcore polling it (NSB: port k on core k + 1)."""
        return {p.number: self._core(k) for k, p in enumerate(self.layout.ports, 1)}

    def cores(self) -> list[int]:
        return sorted({self._core(0), *self.port_cores().values()})

    def command(self) -> list[str]:
        nics_only = all(p.iface.is_dpdk_port for p in self.layout.ports)
        csum = [] if self.options["hw_csum"] and nics_only else ["--no-hw-csum"]
        config = ",".join(f"({port},0,{core})" for port, core in self.port_cores().items())
        lcores = ",".join(map(str, self.cores()))
        return [self.binary, "--log-level=5", *eal.arguments(self.layout, self.memory, lcores),
                "--", *csum, "-p", self.layout.mask, f"--config={config}"]

    def parse_stats(self, answer: str) -> dict[str, float] | None:
        return stats.udp_replay(answer)
