"""The options of the libvirt context: its VMs (resources, boot source, how their data
NICs appear in the guest) and their links."""

from __future__ import annotations

from nsb.contexts import guest_nics, libvirt_host, topology

# a VM's interface: as a lab node's, and the guest PCI address of its NIC
INTERFACE = {**topology.INTERFACE_SCHEMA, "properties": {
    **topology.INTERFACE_SCHEMA["properties"],
    "vpci": {"type": "string", "pattern": guest_nics.PCI}}}

VM = {
    "type": "object",
    "additionalProperties": False,
    "required": ["interfaces"],
    "properties": {
        "role": {"type": "string"},
        "vcpus": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1},
        "ram_mb": {"type": "integer", "minimum": 256, "default": 1024},
        "cpu_pinning": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "emulator_cpus": {"type": "string"},
        "hugepages": {"type": "boolean", "default": False},
        "guest_hugepages": {"type": "integer", "minimum": 0, "default": 0},
        "domain_type": {"enum": ["qemu", "kvm"], "default": "qemu"},
        "machine": {"type": "string", "default": "pc"},
        "cpu_mode": {"enum": ["maximum", "host-passthrough", "host-model"],
                     "default": "maximum"},
        "image": {"type": "string", "description": "a disk image instead of nsb's guest"},
        # the driver nsb binds the data NICs to for a run, or kernel (guest_nics)
        "nic_driver": guest_nics.NIC_DRIVER_SCHEMA,
        "interfaces": {**topology.NODES_SCHEMA["additionalProperties"]["properties"][
            "interfaces"], "additionalProperties": {"anyOf": [INTERFACE, {"type": "null"}]}},
    },
}

OPTIONS = {
    "type": "object",
    "required": ["vms"],
    "additionalProperties": False,
    "properties": {
        "name": {"description": "the context's name",
                 "type": "string"},
        "uri": {"description": "the libvirt connection URI",
                "type": "string", "default": libvirt_host.DEFAULT_URI},
        "boot_timeout_s": {"description": "seconds the VMs may take to boot and answer over SSH",
                           "type": "number", "exclusiveMinimum": 0, "default": 120},
        "guest_binaries": {"description": "host programs (a PROX build, say) put into nsb's guest "
                                          "with their libraries",
                           "type": "array", "items": {"type": "string", "minLength": 1},
                           "default": []},
        "guest_files": {"description": "host files or directories put into nsb's guest at the same"
                                       " paths (what those programs read that is no library: Open "
                                       "vSwitch's schema, say)",
                        "type": "array", "items": {"type": "string", "minLength": 1},
                        "default": []},
        "switch_timeout_s": {"description": "a VM with vhost-user NICs starts once its switch "
                                            "connected",
                             "type": "number", "exclusiveMinimum": 0, "default": 60},
        "vms": {"description": "the VMs by name, each with its interfaces, CPUs and memory",
                "type": "object", "minProperties": 1,
                "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_-]{0,31}$"},
                "additionalProperties": VM},
        "links": topology.LINKS_SCHEMA,
    },
}


def defaults() -> dict:
    """A VM's options nobody gave."""
    return {key: value["default"] for key, value in VM["properties"].items()
            if "default" in value}
