"""Linux forwarding on a node: set up over its executor, and what was there before
written down first and given back afterwards (forwarding sysctls, each port's
addresses, link state, IPv6 switch, permanent neighbours and routes)."""

from __future__ import annotations

import json
import logging
import shlex
from dataclasses import dataclass, field

from nsb.errors import RunError
from nsb.executors.base import Executor
from nsb.vnfs.generic.router_addresses import PortPlan

LOG = logging.getLogger(__name__)

FORWARDING = {4: "net.ipv4.ip_forward", 6: "net.ipv6.conf.all.forwarding"}


def kernel_names(executor: Executor, interfaces: list) -> dict[str, str]:
    """Topology interface name -> the node's network device: the device of that name,
    else the one with the interface's MAC, else the one of its PCI address (a pod
    names ports xe0, xe1 where the kernel says ens785f0)."""
    links = _json(executor, ["ip", "-j", "link", "show"])
    names = {link["ifname"] for link in links}
    by_mac = {str(link.get("address", "")).lower(): link["ifname"] for link in links}
    found = {}
    for iface in interfaces:
        if iface.name in names:
            found[iface.name] = iface.name
        elif iface.mac and iface.mac.lower() in by_mac:
            found[iface.name] = by_mac[iface.mac.lower()]
        elif iface.pci and (device := _pci_netdev(executor, iface.pci)):
            found[iface.name] = device
        else:
            raise RunError(f"{executor.name}: no network device for {iface.name} (no device "
                           f"of that name, none with MAC {iface.mac or '-'}, none of PCI "
                           f"address {iface.pci or '-'}): a router port is a kernel "
                           "interface, not a NIC on a DPDK driver")
    return found


def _pci_netdev(executor: Executor, pci: str) -> str:
    listed = executor.run(["ls", f"/sys/bus/pci/devices/{pci}/net"], check=False)
    return listed.stdout.split()[0] if listed.returncode == 0 and listed.stdout.split() else ""


def _json(executor: Executor, argv: list[str]) -> list:
    out = executor.run(argv).stdout
    try:
        return json.loads(out or "[]")
    except json.JSONDecodeError:
        raise RunError(f"{executor.name}: cannot parse the output of {' '.join(argv)}") from None


@dataclass
class PortState:
    """One port as it was before the router touched it."""

    device: str
    version: int  # the address family the router replaces
    addresses: list[dict] = field(default_factory=list)  # addr_info entries
    was_up: bool = False
    ipv6_disabled: str = ""  # the sysctl's value ('' when the router leaves it)
    neighbours: list[dict] = field(default_factory=list)  # permanent entries
    routes: list[dict] = field(default_factory=list)  # routes through it, not the kernel's


class LinuxRouter:
    """The router's changes on one node: ``apply`` after ``save``; ``restore`` undoes
    them and is safe to call more than once."""

    def __init__(self, executor: Executor, plans: list[PortPlan], devices: dict[str, str]):
        self.executor = executor
        self.plans = plans
        self.devices = devices  # topology name -> device
        self.versions = sorted({_version(p.address) for p in plans})
        self.saved_sysctls: dict[str, str] = {}
        self.saved_ports: list[PortState] = []
        self._applied = False

    def save(self) -> None:
        for version in self.versions:
            key = FORWARDING[version]
            self.saved_sysctls[key] = self._sysctl(key)
        for plan in self.plans:
            self.saved_ports.append(self._port_state(plan))

    def _port_state(self, plan: PortPlan) -> PortState:
        device, version = self.devices[plan.port], _version(plan.address)
        state = PortState(device, version)
        [link] = _json(self.executor, ["ip", "-j", "addr", "show", "dev", device]) or [{}]
        state.was_up = "UP" in link.get("flags", [])
        family = "inet" if version == 4 else "inet6"
        state.addresses = [a for a in link.get("addr_info", []) if a.get("family") == family
                           and (version == 4 or a.get("scope") == "global")]
        if version == 4:  # its own IPv6 chatter would count as forwarded frames
            state.ipv6_disabled = self._sysctl(f"net.ipv6.conf.{device}.disable_ipv6")
        state.neighbours = [n for n in _json(self.executor, ["ip", "-j", "neigh", "show", "dev",
                                                             device, "nud", "permanent"])]
        for option in ("-4", "-6"):
            state.routes += [r for r in _json(self.executor, ["ip", option, "-j", "route",
                                                              "show", "dev", device])
                             if r.get("protocol") != "kernel"]
        return state

    def apply(self) -> None:
        """Addresses from the topology, neighbours and routes to the generator, the
        port up and forwarding on."""
        self._applied = True
        for plan, state in zip(self.plans, self.saved_ports, strict=True):
            dev = state.device
            if state.ipv6_disabled == "0":
                self._set(f"net.ipv6.conf.{dev}.disable_ipv6", "1")
            self._flush(state)
            self.executor.run(["ip", "addr", "add", plan.address, "dev", dev])
            self.executor.run(["ip", "link", "set", dev, "up"])
        lines = [f"neigh replace {a} lladdr {p.peer_mac} dev {self.devices[p.port]} nud permanent"
                 for p in self.plans for a in p.neighbours]
        lines += [f"route replace {net} via {p.peer_ip} dev {self.devices[p.port]} onlink"
                  for p in self.plans for net in p.routes]
        if lines:
            self.executor.run(["ip", "-batch", "-"], input="\n".join(lines) + "\n")
        for key in self.saved_sysctls:
            self._set(key, "1")

    def restore(self) -> None:
        if not self._applied:
            return
        self._applied = False
        for argv, stdin in self.restore_steps():
            self._quiet(argv, stdin)

    def restore_steps(self) -> list[tuple[list[str], str]]:
        """The commands (argv, stdin) that give the node back as ``save`` found it: run
        by ``restore``, and kept on the node as a script for a run that is killed."""
        steps: list[tuple[list[str], str]] = []
        undo = [f"neigh del {a} dev {self.devices[p.port]}" for p in self.plans
                for a in p.neighbours]
        undo += [f"route del {net} dev {self.devices[p.port]}" for p in self.plans
                 for net in p.routes]
        if undo:
            steps.append((["ip", "-force", "-batch", "-"], "\n".join(undo) + "\n"))
        for state in self.saved_ports:
            steps += [(argv, "") for argv in _port_steps(state)]
        steps += [(["sysctl", "-qw", f"{key}={value}"], "")
                  for key, value in self.saved_sysctls.items()]
        return steps

    def restore_script(self) -> str:
        """``restore_steps`` as one POSIX shell script (every step runs, failures or not)."""
        lines = []
        for argv, stdin in self.restore_steps():
            command = shlex.join(argv)
            lines.append(f"printf %s {shlex.quote(stdin)} | {command}" if stdin else command)
        return "\n".join(f"{line} >/dev/null 2>&1" for line in lines) + "\n"

    def _flush(self, state: PortState) -> None:
        if state.version == 4:
            self.executor.run(["ip", "-4", "addr", "flush", "dev", state.device])
        else:
            self.executor.run(["ip", "-6", "addr", "flush", "dev", state.device, "scope",
                               "global"])

    def _sysctl(self, key: str) -> str:
        return self.executor.run(["sysctl", "-n", key]).stdout.strip()

    def _set(self, key: str, value: str) -> None:
        self.executor.run(["sysctl", "-qw", f"{key}={value}"])

    def _quiet(self, argv: list[str], stdin: str = "") -> None:
        """A step of giving back: a failure is a warning, the rest still runs."""
        done = self.executor.run(argv, check=False, **({"input": stdin} if stdin else {}))
        if done.returncode:
            LOG.warning("%s: could not give back: %s: %s", self.executor.name, " ".join(argv),
                        (done.stderr or done.stdout).strip())


def _port_steps(state: PortState) -> list[list[str]]:
    """A port's addresses, link state, IPv6 switch, neighbours and routes as before."""
    dev = state.device
    steps = [["ip", "-4" if state.version == 4 else "-6", "addr", "flush", "dev", dev]
             + ([] if state.version == 4 else ["scope", "global"])]
    for info in state.addresses:
        argv = ["ip", "addr", "add", f"{info['local']}/{info['prefixlen']}", "dev", dev]
        if info.get("broadcast"):
            argv[4:4] = ["broadcast", info["broadcast"]]
        steps.append(argv)
    if not state.was_up:
        steps.append(["ip", "link", "set", dev, "down"])
    if state.ipv6_disabled == "0":
        steps.append(["sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=0"])
    steps += [["ip", "neigh", "replace", entry["dst"], "lladdr", entry["lladdr"], "dev", dev,
               "nud", "permanent"] for entry in state.neighbours if entry.get("lladdr")]
    steps += [route_argv(route, dev) for route in state.routes]
    return steps


def route_argv(route: dict, device: str) -> list[str]:
    """``ip route replace`` of a route as ``ip -j route show`` printed it."""
    argv = ["ip", "route", "replace", route["dst"]]
    if route.get("gateway"):
        argv += ["via", route["gateway"]]
    argv += ["dev", device]
    for key, word in (("protocol", "proto"), ("scope", "scope"), ("metric", "metric"),
                      ("prefsrc", "src")):
        if route.get(key) not in (None, ""):
            argv += [word, str(route[key])]
    if "onlink" in route.get("flags", []):
        argv.append("onlink")
    return argv


def _version(address: str) -> int:
    return 6 if ":" in address else 4
