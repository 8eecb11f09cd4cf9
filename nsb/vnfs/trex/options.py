"""The options of the TRex generator (what ``nsb plugin show trex`` lists)."""

from __future__ import annotations

from nsb.vnfs.trex import vxlan

MAX_FLOWS = 16_777_216  # a source-address range of a /8

OPTIONS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "trex_path": {"description": "the TRex scripts directory on the generator's node (NSB's "
                                     "trex_path); default $NSB_TREX_PATH, else "
                                     "/opt/nsb_bin/trex/scripts",
                      "type": "string", "minLength": 1},
        "trex_client_lib": {"description": "TRex's Python client on the machine nsb runs on (NSB's"
                                           " trex_client_lib); default "
                                           "<trex_path>/automation/trex_control_plane/interactive",
                            "type": "string", "minLength": 1},
        "port_pairs": {"description": "[tx, rx] interface pairs (default: linked interfaces in "
                                      "pairs)",
            "type": "array", "minItems": 1,
            "items": {"type": "array", "minItems": 2, "maxItems": 2,
                      "items": {"type": "string"}},
        },
        "chain_destinations": {
            "description": "service chains on one network: each chain's first port "
                           "(node:interface), whose MAC its frames are sent to from the one "
                           "port pair, each chain counted by its own flow statistics",
            "type": "array", "minItems": 1, "maxItems": 64,
            "items": {"type": "string", "pattern": "^[^:]+:[^:]+$"}},
        "bidirectional": {"description": "traffic both ways through each port pair (uplink and "
                                         "downlink), as NSB sends it",
                          "type": "boolean", "default": True},
        "flows": {"description": "flows per direction; a profile's flows win",
                  "type": "integer", "minimum": 1, "maximum": MAX_FLOWS, "default": 1},
        "latency_pps": {"description": "a latency stream per direction, part of the trial's rate "
                                       "(at most a tenth of it)",
                        "type": "number", "minimum": 0, "default": 1000},
        "generator_tolerance_pct": {"description": "TRex keeps a trial's schedule when it has "
                                                   "sent every frame by this % past the "
                                                   "trial's end (else the trial is stopped "
                                                   "there, generator-limited)",
                                    "type": "number", "exclusiveMinimum": 0, "maximum": 50,
                                    "default": 5},
        "drain_timeout_s": {"description": "at most this long after a trial for frames still in "
                                           "flight",
                            "type": "number", "minimum": 0, "default": 2.0},
        "drain_quiet_s": {"description": "how long the receive counters must stay still for a "
                                         "trial to be over",
                          "type": "number", "minimum": 0.01, "default": 0.05},
        "rx_delay_ms": {"description": "how long after the last frame latency frames still count "
                                       "(TRex's rx_delay_ms)",
                        "type": "integer", "minimum": 10, "default": 100},
        "af_packet_framecnt": {"description": "receive ring of a kernel (af_packet) port, in "
                                              "frames of 2 KiB",
                               "type": "integer", "minimum": 64, "default": 4096},
        "queues_per_port": {"description": "cores per port pair for TRex's data plane (t-rex-64 "
                                           "-c)",
                            "type": "integer", "minimum": 1, "maximum": 64},
        "low_end": {"description": "master, RX and data plane on one core; auto: when the node has"
                                   " < 4 CPUs",
                    "enum": ["auto", True, False], "default": "auto"},
        "low_end_core": {"description": "the core low_end mode runs on",
                         "type": "integer", "minimum": 0, "default": 0},
        "master_core": {"description": "TRex's master thread core (platform master_thread_id)",
                        "type": "integer", "minimum": 0},
        "latency_core": {"description": "TRex's latency thread core (platform latency_thread_id)",
                         "type": "integer", "minimum": 0},
        "worker_cores": {"description": "TRex's data plane cores (platform dual_if threads)",
                         "type": "array", "items": {"type": "integer", "minimum": 0},
                         "minItems": 1},
        "rpc_port": {"description": "RPC and publisher ports; by default derived from the task id "
                                    "and VNF name",
                     "type": "integer", "minimum": 1024, "maximum": 65535},
        "pub_port": {"description": "TRex's publisher port (default: derived from the task id and "
                                    "VNF name)",
                     "type": "integer", "minimum": 1024, "maximum": 65535},
        "vxlan": vxlan.SCHEMA,
        "extra_args": {"description": "more arguments for t-rex-64, appended as given",
                       "type": "array", "items": {"type": "string"}, "default": []},
    },
}
