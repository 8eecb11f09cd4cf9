"""The options of the TRex generator (what ``nsb plugin show trex`` lists)."""

from __future__ import annotations

MAX_FLOWS = 16_777_216  # a source-address range of a /8

OPTIONS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # the TRex scripts directory on the generator's node (NSB's trex_path); default
        # $NSB_TREX_PATH, else /opt/nsb_bin/trex/scripts
        "trex_path": {"type": "string", "minLength": 1},
        # TRex's Python client on the machine nsb runs on (NSB's trex_client_lib);
        # default <trex_path>/automation/trex_control_plane/interactive
        "trex_client_lib": {"type": "string", "minLength": 1},
        "port_pairs": {
            "type": "array", "minItems": 1,
            "items": {"type": "array", "minItems": 2, "maxItems": 2,
                      "items": {"type": "string"}},
        },
        # traffic both ways through each port pair (uplink and downlink), as NSB sends it
        "bidirectional": {"type": "boolean", "default": True},
        "flows": {"type": "integer", "minimum": 1, "maximum": MAX_FLOWS, "default": 1},
        # a latency stream per direction, part of the trial's rate (at most a tenth of it)
        "latency_pps": {"type": "number", "minimum": 0, "default": 1000},
        "generator_tolerance_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 50,
                                    "default": 5},
        "drain_timeout_s": {"type": "number", "minimum": 0, "default": 2.0},
        "drain_quiet_s": {"type": "number", "minimum": 0.01, "default": 0.05},
        # how long after the last frame latency frames still count (TRex's rx_delay_ms)
        "rx_delay_ms": {"type": "integer", "minimum": 10, "default": 100},
        # a trial TRex stretches beyond this many times its duration (+10 s) is stopped
        "stretch_limit": {"type": "number", "minimum": 1, "default": 5},
        # receive ring of a kernel (af_packet) port, in frames of 2 KiB
        "af_packet_framecnt": {"type": "integer", "minimum": 64, "default": 4096},
        "queues_per_port": {"type": "integer", "minimum": 1, "maximum": 64},
        # master, RX and data plane on one core; auto: when the node has < 4 CPUs
        "low_end": {"enum": ["auto", True, False], "default": "auto"},
        "low_end_core": {"type": "integer", "minimum": 0, "default": 0},
        "master_core": {"type": "integer", "minimum": 0},
        "latency_core": {"type": "integer", "minimum": 0},
        "worker_cores": {"type": "array", "items": {"type": "integer", "minimum": 0},
                         "minItems": 1},
        # RPC and publisher ports; by default derived from the task id and VNF name
        "rpc_port": {"type": "integer", "minimum": 1024, "maximum": 65535},
        "pub_port": {"type": "integer", "minimum": 1024, "maximum": 65535},
        "extra_args": {"type": "array", "items": {"type": "string"}, "default": []},
    },
}
