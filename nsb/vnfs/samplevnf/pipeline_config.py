"""The pipelines of a SampleVNF's config, laid out as NSB lays them out.

NSB (``samplevnf_helper.MultiPortConfig``) starts from its template and writes:
MASTER; ARPICMP (on the master core, one software queue in and one out per
load balancer); vCGNAPT's TIMER; then per load balancer and its share of the
port pairs either (``lb_config: SW``) a TXRX pipeline receiving the ports, a
LOADB spreading over the workers, the workers and a TXRX sending, or (``HW``)
workers that receive and send themselves (run to completion, a queue pair per
worker). Software queues (SWQn) are numbered as they are handed out, pipelines
as they are written, cores one after the other (two hyperthreads per core with
``xC/2T``). nsb writes the same, then places NSB's core numbers on the
node's cores when ``cores`` says which.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from nsb.errors import RunError
from nsb.vnfs.samplevnf.ports import Port, PortLayout
from nsb.vnfs.samplevnf.templates import Template
from nsb.vnfs.samplevnf.vnf_config import VnfConfig

Section = tuple[str, tuple[tuple[str, str], ...]]
QUEUE = re.compile(r"\b([RT])XQ(\d+)\.(\d+)\b")
NO_PRIVATE_QUEUE_HANDLER = ("ACL", "VFW")  # NSB leaves prv_que_handler to the template


def swqs(start: int, count: int) -> str:
    return " ".join(f"SWQ{n}" for n in range(start, start + count))


def hw_queues(kind: str, ports: Sequence[Port], queues: Sequence[int]) -> str:
    """``RXQ<port>.<queue>``s: every port for each queue in turn, as NSB lists them."""
    return " ".join(f"{kind}XQ{p.number}.{q}" for q in queues for p in ports)


def next_core(core: str, hyperthreads: bool) -> str:
    """NSB's next worker core: the next core, or its second hyperthread first."""
    if not hyperthreads:
        return str(int(core) + 1)
    return str(int(core[:-1]) + 1) if core.endswith("h") else f"{core}h"


class _Layout:
    """The running counters NSB keeps while it writes the sections."""

    def __init__(self, template: Template, vnf_type: str, cfg: VnfConfig):
        self.template, self.vnf_type, self.cfg = template, vnf_type, cfg
        self.sections: list[Section] = []
        self.swq = 0
        self.pipeline = 0
        self.core = "1"
        self.arp_out: list[str] = []

    def write(self, kind: str, values: dict, drop: Sequence[str] = ()) -> None:
        """A template section with ``values`` in its keys' places, as PIPELINE<n>."""
        merged = {k: v for k, v in self.template[kind] if k not in drop}
        merged.update(values)
        missing = [k for k, v in merged.items() if v is None]
        if missing:  # a template key nsb must fill and did not: a bug, never input
            raise ValueError(f"{kind}: no value for {', '.join(missing)}")
        self.sections.append((f"PIPELINE{self.pipeline}", tuple(merged.items())))

    def arpicmp(self, pairs: Sequence[tuple[Port, Port]], balancers: int) -> None:
        arp_in, arp_out = swqs(0, balancers), swqs(balancers, balancers)
        self.swq = 2 * balancers
        self.arp_out = arp_out.split()
        values = {"core": "0", "pktq_in": arp_in, "pktq_out": arp_out,
                  "pktq_in_prv": " ".join(f"RXQ{up.number}.0" for up, _ in pairs),
                  "prv_to_pub_map": "".join(f"({up.number},{down.number})"
                                            for up, down in pairs)}
        if self.cfg.lb_config == "HW":  # run to completion: ARP sends on queue 0 itself
            self.swq = 0
            values["pktq_in"] = swqs(0, balancers * self.cfg.workers)
            values["pktq_out"] = hw_queues("T", [p for pair in pairs for p in pair], [0])
        self.pipeline = 1
        self.write("ARPICMP", values)

    def timer(self) -> None:
        self.pipeline += 1
        self.write("TIMER", {"core": "0"})

    def balancer(self, index: int, pairs: Sequence[tuple[Port, Port]]) -> None:
        """One load balancer's pipelines (``index`` from 1) for its port pairs."""
        ports = [p for pair in pairs for p in pair]
        numbers = [p.number for p in ports]
        private = "(" + "".join(f"{numbers.index(up.number)}," for up, _ in pairs) + ")"
        workers = self.cfg.workers
        lb_out: list[str] = []
        if self.cfg.lb_config == "SW":
            txrx_core = self.core
            self.pipeline += 1
            self.write("TXRX", {"core": self.core, "pipeline_txrx_type": "RXRX",
                                "pktq_in": hw_queues("R", ports, range(workers)),
                                "pktq_out": f"{swqs(self.swq, len(ports))} SWQ{index - 1}"})
            self.core = str(int(self.core) + 1)
            lb_out = self._loadb(len(ports), private)
        for worker in range(workers):
            self._worker(index, worker, ports, private, lb_out)
        if self.cfg.lb_config == "SW":
            sent = len(ports) * workers
            self.pipeline += 1
            self.write("TXRX", {"core": txrx_core, "pipeline_txrx_type": "TXTX",
                                "pktq_in": f"{swqs(self.swq - sent, sent)} "
                                           f"{self.arp_out[index - 1]}",
                                "pktq_out": hw_queues("T", ports, range(workers))})

    def _loadb(self, ports: int, private: str) -> list[str]:
        self.pipeline += 1
        pktq_in = swqs(self.swq, ports)
        self.swq += ports
        out = swqs(self.swq, ports * self.cfg.workers)
        self.swq += ports * self.cfg.workers
        self.write("LOADB", {"core": self.core, "pktq_in": pktq_in, "pktq_out": out,
                             "n_vnf_threads": str(self.cfg.workers),
                             "prv_que_handler": private})
        self.core = str(int(self.core) + 1)
        return out.split()

    def _worker(self, index: int, worker: int, ports: list[Port], private: str,
                lb_out: list[str]) -> None:
        self.pipeline += 1
        if self.cfg.lb_config == "HW":
            values = {"pktq_in": hw_queues("R", ports, [worker]),
                      "pktq_out": f"{hw_queues('T', ports, [worker + 1])} SWQ{self.swq}"}
            self.swq += 1
        else:
            values = {"pktq_in": " ".join(lb_out.pop(0) for _ in ports),
                      "pktq_out": swqs(self.swq, len(ports))}
            self.swq += len(ports)
        if self.vnf_type not in NO_PRIVATE_QUEUE_HANDLER:
            values["prv_que_handler"] = private
        values["core"] = self.core
        template = dict(self.template[self.vnf_type])
        drop: tuple[str, ...] = ()
        if template.get("vnf_set") and worker == 0:  # each balancer's own public address
            address, _, ports_range = template["public_ip_port_range"].partition(":")
            values["public_ip_port_range"] = f"{int(address, 16) + index - 1:x}:{ports_range}"
        elif template.get("vnf_set"):
            drop = ("vnf_set", "public_ip_port_range")
        self.write(self.vnf_type, values, drop)
        self.core = next_core(self.core, self.cfg.hyperthreads)


def balancer_shares(pairs: Sequence, lb_count: int) -> list[list]:
    """The port pairs of each load balancer: the first ones take one more."""
    balancers = min(len(pairs), lb_count)
    if not balancers:
        return []
    base, extra = divmod(len(pairs), balancers)
    shares, start = [], 0
    for index in range(balancers):
        size = base + (1 if index < extra else 0)
        shares.append(list(pairs[start:start + size]))
        start += size
    return shares


def generate(template: Template, vnf_type: str, layout: PortLayout,
             cfg: VnfConfig, traffic_type: int = 4) -> list[Section]:
    """The pipeline sections (without ``[EAL]``) NSB writes for these ports."""
    shares = balancer_shares(layout.pairs, cfg.lb_count)
    built = _Layout(template, vnf_type, cfg)
    built.sections.append(("PIPELINE0", template["MASTER"]))
    built.arpicmp(layout.pairs, len(shares))
    if vnf_type == "CGNAPT":
        built.timer()
    for index, share in enumerate(shares, 1):
        built.balancer(index, share)
    return [(name, tuple((k, _traffic_type(k, v, traffic_type)) for k, v in values))
            for name, values in built.sections]


def _traffic_type(key: str, value: str, traffic_type: int) -> str:
    """NSB's traffic_type option: ``traffic_type`` and ``pkt_type`` of IPv6 pipelines."""
    if key == "traffic_type" and value == "4":
        return str(traffic_type)
    if key == "pkt_type" and value == "ipv4":
        return f"ipv{traffic_type}"
    return value


def place_cores(sections: list[Section], cores: Sequence[int]) -> list[Section]:
    """NSB's core n on ``cores[n]`` (the last one for n beyond the list); a second
    hyperthread (``nh``) stays one."""
    if not cores:
        return sections

    def placed(core: str) -> str:
        number = int(core.rstrip("h"))
        return f"{cores[min(number, len(cores) - 1)]}{'h' if core.endswith('h') else ''}"

    return _cores_as(sections, placed)


def named_cores(sections: list[Section], names: dict[str, str]) -> list[Section]:
    """The sections with each ``core`` a CPU number written as ``names`` has it (the
    core map's notation, core_map.names); ``Nh``, the second hyperthread of CPU N's
    core, gets its ``h`` after the name."""
    def named(core: str) -> str:
        name = names[core.rstrip("h")]
        if core.endswith("h") and name.endswith("h"):
            raise RunError(f"core {core}: CPU {core[:-1]} is itself a second hyperthread "
                           f"({name}); give the first one's CPU in cores")
        return name + ("h" if core.endswith("h") else "")

    return _cores_as(sections, named)


def _cores_as(sections: list[Section], rewrite: Callable[[str], str]) -> list[Section]:
    """The sections with every ``core`` value rewritten."""
    return [(name, tuple((k, rewrite(v) if k == "core" else v) for k, v in values))
            for name, values in sections]


def cores_used(sections: list[Section]) -> list[str]:
    return sorted({v for _, values in sections for k, v in values if k == "core"},
                  key=lambda c: (int(c.rstrip("h")), c))


def queues_per_port(sections: list[Section]) -> dict[int, int]:
    """Port -> how many queue pairs the pipelines use on it (RX and TX counted apart)."""
    rx: dict[int, int] = {}
    tx: dict[int, int] = {}
    for _, values in sections:
        for key, value in values:
            if key not in ("pktq_in", "pktq_out", "pktq_in_prv"):
                continue
            for kind, port, queue in QUEUE.findall(value):
                seen = rx if kind == "R" else tx
                seen[int(port)] = max(seen.get(int(port), 0), int(queue) + 1)
    return {port: max(rx.get(port, 1), tx.get(port, 1)) for port in set(rx) | set(tx)}


def render(sections: list[Section]) -> str:
    """INI text, as NSB's ConfigParser writes it."""
    return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values) + "\n"
                   for name, values in sections)
