"""The options of the SampleVNF plugins: NSB's per-VNF keys and nsb's own."""

from __future__ import annotations

import copy

DEFAULT_BIN_PATH = "/opt/nsb_bin"  # NSB's bin_path (nsb.conf of Yardstick)

COMMON = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "bin_path": {"description": "NSB's bin_path: the directory of the SampleVNF binaries on "
                                    "the node",
                     "type": "string", "minLength": 1, "default": DEFAULT_BIN_PATH},
        "vnf_path": {"description": "the binary itself (default "
                                    "<bin_path>/<vFW|vACL|vCGNAPT|UDP_Replay>)",
                     "type": "string", "minLength": 1},
        "cores": {"description": "NSB's core n of the generated layout runs on CPU cores[n] (the "
                                 "last one beyond the list; written as the VNF's core map names "
                                 "that CPU on the node); default: NSB's core numbers as they are",
                  "type": "array", "minItems": 1, "maxItems": 128,
                  "items": {"type": "integer", "minimum": 0, "maximum": 4095}},
        "memory_mb": {"description": "the EAL's memory (socket_mem), on hugepages nsb adds for the"
                                     " run",
                      "type": "integer", "minimum": 64, "maximum": 262144, "default": 1000},
        "hugepage_size": {"description": "auto: one 1 GB page where the node can add it, else 2 MB"
                                         " pages",
                          "enum": ["auto", "1G", "2M"], "default": "auto"},
        "nfvi_enable": {"description": "NSB's keys for its collectd and timeouts: nsb samples NFVi"
                                       " itself",
                        "type": "boolean"},
        "collectd": {"description": "NSB's NFVi collector: accepted, nsb samples itself",
                     "type": "object"},
        "timeout": {"description": "NSB's; accepted (nsb.conf's vnf_start_timeout applies)",
                    "type": "number", "exclusiveMinimum": 0},
        "vnf_deploy": {"description": "NSB's \"build SampleVNF from git on the node\": nsb runs "
                                      "installed binaries",
                       "enum": [False]},
    },
}

_PIPELINE = {
    "vnf_config": {"description": "NSB's load balancing and workers ({lb_config, lb_count, "
                                  "worker_config, worker_threads, file}), checked by "
                                  "vnf_config.read",
                   "type": ["object", "null"]},
}
_RULES = {
    "rules": {"description": "NSB's ACL rules file (access-list-entries), relative to the task "
                             "file",
              "type": "string", "minLength": 1},
}
_CGNAPT = {
    "napt": {"description": "NSB's NAPT mode: static adds a translation for each private port's "
                            "gateway",
             "enum": ["static", "dynamic"], "default": "static"},
    "public_ip": {"description": "the first public address (NSB's 152.16.40.10; default: the "
                                 "scenario's flow.public_ip, else NSB's)",
                  "type": "string", "format": "ipv4",
                  "pattern": r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$"},
}
_UDP_REPLAY = {
    "hw_csum": {"description": "NSB's hw_csum: checksums on the NIC (baremetal and SR-IOV), else "
                               "--no-hw-csum",
                "type": "boolean", "default": False},
}


def schema(*extra: dict) -> dict:
    built = copy.deepcopy(COMMON)
    for more in extra:
        built["properties"].update(copy.deepcopy(more))
    return built


FIREWALL = schema(_PIPELINE, _RULES)  # vFW, vACL
CGNAPT = schema(_PIPELINE, _CGNAPT)
UDP_REPLAY = schema(_UDP_REPLAY)
