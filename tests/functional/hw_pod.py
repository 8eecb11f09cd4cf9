"""A hardware-like pod for functional tests: two VMs, a traffic generator ``tg`` and a
system under test ``sut``, whose data NICs are PCI devices a DPDK driver takes, as a
lab's servers would have them.

The libvirt context boots them under TCG (nsb's guest image): each has two data
NICs, virtio-net PCI devices at fixed guest PCI addresses, cabled tg:xe0-sut:xe0
and tg:xe1-sut:xe1 by host bridges, and is reached over SSH with a key of the pod.
The TG also carries PROX (``prox_lab.PROX``) beside the guest's dpdk-testpmd; with
``ovs=True`` the guests carry Open vSwitch too (this host's OVS-DPDK build, its tools
and its schema) and the SUT is a switch node, ``bridges: [br0]``, so that a task link
``{ends: [tg:xe0, tg:xe1], via: br0}`` takes its two NICs as OVS's ports. With
``vm_host=True`` they carry libvirtd and QEMU too, for ``vm_host_ready`` to make the
SUT a libvirt host of VMs (nested TCG) as a StandaloneOvsDpdk host is. With
``tools=True`` they carry what nsb's ansible roles and the tools they install need
of a node (GNU tar, ldd, bash, coreutils' env, lspci, util-linux's script and
unshare, TRex's and the SampleVNFs' runtime libraries): a lab's server has them from
its distribution, these guests have no apt. An NSB
pod file names them (name, role, ip, user, key_filename, and per interface vpci,
driver, dpdk_driver, local_mac, local_ip, netmask, dpdk_port_num, peer); the NICs
are on virtio-pci, for whoever uses the pod to bind them to ``dpdk_driver``.

    with hw_pod("vfio-pci") as pod_file:   # or "uio_pci_generic" (the default)
        tg = pod_nodes(pod_file)["tg"]
        ssh(tg, "cat /sys/bus/pci/devices/0000:00:10.0/uevent")

``uio_pci_generic`` boots machine pc; ``vfio-pci`` boots q35 with a virtual Intel
IOMMU (NICs with iommu_platform=on, intel_iommu=on in the guest). On exit the
domains, bridges, taps, keys, files and any hugepages are gone, also after an error;
a killed test's pod is removed by the next ``nsb task start`` (the pod is registered
as a run). libvirtd is started for the pod if it does not run (vm_lab).
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import subprocess
from pathlib import Path

import yaml

from nsb import host_libraries, leftovers, plugins
from nsb.contexts.libvirt_vms import LibvirtContext
from nsb.runinfo import RunInfo, new_task_id
from nsb.task.documents import Where
from nsb.task.model import PluginSpec, Task
from nsb.task.yaml_lines import LocatedDocument
from nsb.vnfs.ovs import daemons as ovs_daemons
from tests.conftest import TREX_PATH
from tests.functional.prox_lab import PROX
from tests.functional.vm_lab import libvirtd
from tests.tool_archives import TOOLS

ROLES = {"tg": "TrafficGen", "sut": "VNF"}
DRIVERS = ("uio_pci_generic", "vfio-pci")
OVS_BRIDGE = "br0"
OVS_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # where this host's OVS tools are
# what makes a guest a libvirt host of VMs (vm_host=True): libvirtd with its QEMU driver,
# QEMU with its TCG module and firmware, libvirt's qemu+ssh helper, iproute2 for taps
# and coreutils' timeout (the SSH executor wraps commands in it; busybox's would run its
# own ip applet, which has no tuntap)
VM_HOST_BINARIES = ("/usr/sbin/libvirtd", "/usr/bin/virt-ssh-helper", "/usr/bin/timeout",
                    "/usr/bin/qemu-system-x86_64", "/usr/bin/ip")
VM_HOST_FILES = ("/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so",
                 "/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so",
                 "/usr/share/libvirt/cpu_map", "/usr/share/seabios",
                 "/usr/share/qemu/kvmvapic.bin", "/usr/share/qemu/linuxboot_dma.bin",
                 "/usr/lib/ipxe/qemu/efi-virtio.rom")
# what a node needs for nsb's ansible roles to install and check tools on it and for
# TRex's launcher to run (tools=True): GNU tar (ansible's unarchive refuses busybox's),
# ldd (the roles' library check; a bash script), bash and coreutils' env (t-rex-64 is a
# bash script, nsb starts it with env -C), lspci with its names (dpdk_setup_ports.py)
# and util-linux's script and unshare (a SampleVNF's terminal and private mount)
TOOL_NODE_BINARIES = ("/usr/bin/tar", "/usr/bin/ldd", "/bin/bash", "/usr/bin/env",
                      "/usr/bin/lspci", "/usr/bin/script", "/usr/bin/unshare")
TOOL_NODE_FILES = ("/usr/share/misc/pci.ids",)
# the programs whose runtime libraries a node's distribution packages would give it
# (the guest has no apt): TRex's libzmq and libpcap, the SampleVNFs' json-c and civetweb
TOOL_PROGRAMS = (TREX_PATH / "_t-rex-64", TOOLS / "samplevnf" / "vFW")


class hw_pod:  # lower case: read as a function, with hw_pod(...) as pod_file
    """The pod as a context manager: ``with hw_pod(driver) as pod_file``. While it is
    up, ``task_id`` (in its domains' names, ``nsb-<task_id>-tg``) and ``context``
    (the LibvirtContext) are there too."""

    def __init__(self, driver: str = "uio_pci_generic", results_dir: Path | None = None, *,
                 vcpus: int = 2, ram_mb: int = 1024, guest_hugepages: int = 128,
                 boot_timeout_s: float = 240, ovs: bool = False, vm_host: bool = False,
                 tools: bool = False):
        if driver not in DRIVERS:
            raise ValueError(f"driver {driver!r}: one of {', '.join(DRIVERS)}")
        self.driver = driver
        self.task_id = new_task_id(lambda _: False)
        self._own_dir = results_dir is None  # a directory of its own, removed at exit
        # named after the pod: the next run removes it too if the test is killed
        self.results_dir = Path(results_dir or f"/tmp/nsb-{self.task_id}-hwpod")
        vm = {"vcpus": vcpus, "ram_mb": ram_mb, "guest_hugepages": guest_hugepages,
              "nic_driver": driver, "interfaces": {"xe0": {}, "xe1": {}}}
        binaries, files = [str(PROX)], []
        if ovs:
            binaries += [shutil.which(b, path=OVS_PATH) or b for b in ovs_daemons.BINARIES]
            binaries.append(ovs_daemons.DPDK_VSWITCHD)
            files.append(ovs_daemons.SCHEMA)
        if vm_host:
            binaries += VM_HOST_BINARIES
            files += VM_HOST_FILES
        if tools:
            binaries += TOOL_NODE_BINARIES
            files += [*TOOL_NODE_FILES, *runtime_libraries(TOOL_PROGRAMS)]
        self.bridges = {"sut": [OVS_BRIDGE]} if ovs else {}
        self.options = {"boot_timeout_s": boot_timeout_s, "guest_binaries": binaries,
                        "guest_files": files,
                        "vms": {name: {**vm, "role": role} for name, role in ROLES.items()},
                        "links": [["tg:xe0", "sut:xe0"], ["tg:xe1", "sut:xe1"]]}
        self.context: LibvirtContext | None = None
        self._stack = contextlib.ExitStack()

    @property
    def pod_file(self) -> Path:
        return self.results_dir / "pod.yaml"

    def __enter__(self) -> Path:
        try:
            self._stack.enter_context(libvirtd())
            self.results_dir.mkdir(parents=True, exist_ok=True)
            self._stack.enter_context(leftovers.registered(
                self.task_id, self.results_dir, str(Path(__file__))))
            self._stack.callback(self._remove_files)
            self.context = _context(self.options, self.task_id, self.results_dir)
            self._stack.callback(self.context.undeploy)
            self.context.link_across({})
            self.context.deploy()
            self.pod_file.write_text(yaml.safe_dump(pod(self.context, self.bridges),
                                                    sort_keys=False))
        except BaseException:
            self._stack.close()
            raise
        return self.pod_file

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _remove_files(self) -> None:
        self.pod_file.unlink(missing_ok=True)
        if self._own_dir:
            shutil.rmtree(self.results_dir, ignore_errors=True)


def runtime_libraries(programs) -> list[str]:
    """The shared libraries ``programs`` load from this host's system directories (not
    the ones they carry or /usr/local's)."""
    return sorted({lib for program in programs for lib in host_libraries.of(str(program))
                   if lib.startswith(("/lib/", "/usr/lib/"))})


def _context(options: dict, task_id: str, results_dir: Path) -> LibvirtContext:
    """A libvirt context with ``options``, as a task would have it."""
    where = Where(LocatedDocument(options, "hw_pod"), ())
    spec = PluginSpec("libvirt", options, where)
    task = Task(file=Path(__file__), context=spec, scenarios=(), outputs=())
    run = RunInfo(task_id=task_id, task=task, results_dir=results_dir)
    return LibvirtContext(spec, plugins.check_options(LibvirtContext, spec), run)


def pod(context: LibvirtContext, bridges: dict[str, list[str]] | None = None) -> dict:
    """The context's VMs as an NSB pod (their NICs on the guest's virtio-pci driver,
    ``dpdk_driver`` the one to bind them to), a node in ``bridges`` a switch node
    offering those bridges."""
    nodes = []
    for node in context.nodes.values():
        interfaces = {}
        for port, (name, iface) in enumerate(node.interfaces.items()):
            address = ipaddress.ip_interface(iface.ip)
            interfaces[name] = {
                "vpci": iface.pci, "driver": iface.driver, "dpdk_driver": iface.dpdk_driver,
                "local_mac": iface.mac, "local_ip": str(address.ip),
                "netmask": str(address.netmask), "dpdk_port_num": port,
                "peer": str(iface.peer)}
        nodes.append({"name": node.name, "role": node.role, "ip": node.ssh.host,
                      "user": node.ssh.user, "key_filename": node.ssh.key_filename,
                      **({"bridges": bridges[node.name]} if node.name in (bridges or {})
                         else {}), "interfaces": interfaces})
    return {"nodes": nodes}


def pod_nodes(pod_file: Path) -> dict[str, dict]:
    """The pod's nodes by name, as written."""
    return {node["name"]: node for node in yaml.safe_load(pod_file.read_text())["nodes"]}


def ssh(node: dict, command: str, timeout: float = 120,
        check: bool = True) -> subprocess.CompletedProcess:
    """``command`` (a shell line) on a pod node, as root with the pod's key."""
    argv = ["ssh", "-i", node["key_filename"], "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
            "-o", "ConnectTimeout=20", f"{node['user']}@{node['ip']}", command]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{node['name']}: {command!r} exited {done.returncode}:\n"
                             f"{done.stdout}{done.stderr}")
    return done


def vm_host_ready(node: dict) -> str:
    """Make a pod node booted with ``vm_host=True`` what NSB's standalone contexts ask of
    a host, as a lab prepares its servers once: libvirtd running (QEMU as root, console
    to a file: the guest has no virtlogd) and the management NIC in a bridge, br-int,
    that keeps the node's address, so a VM's management NIC on it is in the pod's
    management subnet, reached from here like the node. Returns the bridge's name."""
    ssh(node, "grep -q ^libvirt-qemu: /etc/passwd || {"
              " echo 'libvirt-qemu:x:64055:64055::/var/lib/libvirt:/bin/false' >> /etc/passwd;"
              " echo 'libvirt-qemu:x:64055:' >> /etc/group; echo 'kvm:x:993:' >> /etc/group; }")
    ssh(node, "mkdir -p /etc/libvirt /usr/share/qemu /var/lib/libvirt /var/log/libvirt "
              "/var/cache/libvirt && ln -sf /usr/share/seabios/bios-256k.bin /usr/share/qemu/ "
              "&& printf 'user = \"root\"\\ngroup = \"root\"\\nstdio_handler = \"file\"\\n"
              "security_driver = \"none\"\\n' > /etc/libvirt/qemu.conf && libvirtd -d")
    # one line: the address moves from mgmt to br-int while this SSH session uses it
    ssh(node, "ip link add br-int type bridge && ip link set br-int up && "
              "a=$(ip -o -4 addr show dev mgmt | awk '{print $4}') && "
              "ip addr flush dev mgmt && ip link set mgmt master br-int && "
              "ip addr add $a dev br-int")
    ssh(node, "for i in $(seq 60); do [ -S /var/run/libvirt/libvirt-sock ] && exit 0; "
              "sleep 1; done; exit 1")
    return "br-int"


def node_taps(pod_file: Path, name: str = "sut") -> dict[str, str]:
    """The host taps of a pod VM's data NICs, by the pod's interface name (matched by
    MAC in its domain's interface list)."""
    node = next(n for n in yaml.safe_load(pod_file.read_text())["nodes"] if n["name"] == name)
    by_mac = {i["local_mac"].lower(): iface for iface, i in node["interfaces"].items()}
    domain = next(line.strip() for line in subprocess.run(
        ["virsh", "-q", "list", "--name"], capture_output=True, text=True).stdout.splitlines()
        if line.strip().endswith(f"-{name}"))
    listing = subprocess.run(["virsh", "-q", "domiflist", domain], capture_output=True,
                             text=True).stdout.splitlines()
    return {by_mac[line.split()[-1].lower()]: line.split()[0] for line in listing
            if line.split()[-1].lower() in by_mac}


def sut_taps(pod_file: Path) -> list[str]:
    """The host taps of the SUT VM's data NICs."""
    return list(node_taps(pod_file, "sut").values())
