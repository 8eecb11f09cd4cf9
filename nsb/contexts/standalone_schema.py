"""The options of NSB's standalone contexts: NSB's keys (host file, vm_deploy, flavor,
servers, networks, ovs_properties) and the few nsb adds to run them in a lab; the
addresses a network's options give."""

from __future__ import annotations

import ipaddress

from nsb.contexts import guest_nics, topology

_PCI = "^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$"
_NETWORK = {
    "type": "object",
    "required": ["phy_port", "vpci", "cidr"],
    "properties": {
        "phy_port": {"description": "the host's NIC (PCI); nsb: or an interface name (an af_packet"
                                    " port in the lab)",
                     "type": "string", "anyOf": [{"pattern": _PCI},
                                                 {"pattern": "^[A-Za-z0-9_.-]{1,15}$"}]},
        "vpci": {"type": "string", "pattern": _PCI},
        "cidr": {"type": "string"},
        "gateway_ip": {"type": "string"},
        "phy_driver": {"type": "string"},
        "port_num": {"type": "integer", "minimum": 0},
    },
}
_SERVER = {
    "type": "object",
    "required": ["network_ports"],
    "properties": {"network_ports": {
        "type": "object", "required": ["mgmt"],
        "properties": {"mgmt": {"type": "object", "required": ["cidr"],
                                "properties": {"cidr": {"type": "string"}}}},
        "additionalProperties": {"type": "array", "minItems": 1,
                                 "items": {"type": "string"}},
    }},
}
_FLAVOR = {
    "type": "object",
    "properties": {
        "images": {"type": "string"},
        "ram": {"type": "integer", "minimum": 256, "default": 4096},
        "hw_socket": {"type": "integer", "minimum": 0},
        "user": {"type": "string"}, "password": {"type": "string"},
        "key_filename": {"type": "string"},
        "extra_specs": {"type": "object", "properties": {
            "hw:cpu_sockets": {"type": "integer", "minimum": 1},
            "hw:cpu_cores": {"type": "integer", "minimum": 1},
            "hw:cpu_threads": {"type": "integer", "minimum": 1},
            "hw_socket": {"type": "integer", "minimum": 0},
            "cputune": {"type": "string"},
        }},
    },
}
_OVS = {
    "type": "object",
    "properties": {
        "version": {"type": "object", "properties": {"ovs": {"type": ["string", "number"]},
                                                      "dpdk": {"type": ["string", "number"]}}},
        "pmd_threads": {"type": "integer", "minimum": 1},
        "pmd_cpu_mask": {"type": ["string", "integer"]},
        "lcore_mask": {"type": ["string", "integer"]},
        "ram": {"type": "object", "properties": {"socket_0": {"type": "integer"},
                                                  "socket_1": {"type": "integer"}}},
        "queues": {"type": "integer", "minimum": 1},
        "vpath": {"type": "string"},
        "pmd_maxsleep_us": {
            "type": "integer", "minimum": 0, "maximum": 10000,
            "description": "nsb: OVS's other_config:pmd-maxsleep, how long an idle PMD may "
                           "sleep (0, the default: it polls); for hosts that share their "
                           "CPUs, as a VM under TCG does, not for measurements"},
    },
}



OPTIONS = {
    "type": "object",
    "required": ["file", "servers", "networks"],
    # keys NSB's standalone contexts do not read are ignored there; here too
    "additionalProperties": True,
    "properties": {
        "name": {"description": "the context's name",
                 "type": "string"},
        "file": {"description": "NSB's host file: the host nsb reaches over SSH",
                 "type": "string", "minLength": 1},
        "vm_deploy": {"description": "false: use the VMs already listed in the host file, over SSH",
                      "type": "boolean", "default": True},
        "flavor": _FLAVOR,
        "servers": {"description": "the VMs (nodes named by their key), each with a management "
                                   "address and one NIC per network",
                    "type": "object", "minProperties": 1, "additionalProperties": _SERVER},
        "networks": {"description": "per network: its physical port (phy_port), guest PCI address "
                                    "(vpci) and address (cidr)",
                     "type": "object", "minProperties": 1, "additionalProperties": _NETWORK},
        "links": topology.LINKS_SCHEMA,
        "nfvi_type": {"description": "NSB's NFVi collector type",
                      "type": "string"},
        "domain_type": {"description": "nsb's: how the VMs are run on the host",
                        "enum": ["kvm", "qemu"], "default": "kvm"},
        "libvirt_uri": {"type": "string", "description": "default: qemu+ssh to the host"},
        "boot_timeout_s": {"description": "seconds the VMs may take to boot and answer over SSH",
                           "type": "number", "exclusiveMinimum": 0, "default": 180},
        "switch_timeout_s": {"description": "a VM with vhost-user NICs starts once its switch "
                                            "connected",
                             "type": "number", "exclusiveMinimum": 0, "default": 60},
        "guest_hugepages": {"description": "hugepages nsb's guest reserves at boot",
                            "type": "integer", "minimum": 0, "default": 0},
        "nic_driver": {"description": "how nsb's guest has its NICs (guest_nics); vfio-pci's "
                                      "virtual IOMMU is not for vhost-user NICs",
                       "enum": [guest_nics.DEFAULT, guest_nics.KERNEL],
                       "default": guest_nics.DEFAULT},
        "guest_binaries": {"description": "host programs put into nsb's guest with their libraries",
                           "type": "array", "items": {"type": "string", "minLength": 1},
                           "default": []},
    },
}
OVS_DPDK_OPTIONS = {**OPTIONS, "properties": {**OPTIONS["properties"], "ovs_properties": _OVS}}


def network_address(cidr: str, where, at: tuple):
    """``cidr`` (an option at ``at``) as an address with its network."""
    try:
        return ipaddress.ip_interface(cidr)
    except ValueError:
        raise where.error(f"{cidr!r} is not an address with a prefix length (e.g. "
                          "152.16.100.10/24)", *at) from None


def gateway(network: dict) -> str:
    """The address of a VM network's far end: its gateway_ip, else the subnet's first
    address that is not the VM's."""
    vm = ipaddress.ip_interface(network["cidr"])
    if network.get("gateway_ip"):
        return f"{network['gateway_ip']}/{vm.network.prefixlen}"
    first = next(ip for ip in vm.network.hosts() if ip != vm.ip)
    return f"{first}/{vm.network.prefixlen}"
