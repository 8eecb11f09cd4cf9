"""The options of TRex in ASTF mode (``trex_astf``): the server's, as stateless TRex takes
them, and where its connections come from and go to."""

from __future__ import annotations

from nsb.vnfs.trex.options import OPTIONS_SCHEMA as STL_OPTIONS

# the server's options, shared with stateless TRex
SHARED = ("trex_path", "trex_client_lib", "port_pairs", "generator_tolerance_pct",
          "af_packet_framecnt", "queues_per_port", "low_end", "low_end_core", "master_core",
          "latency_core", "worker_cores", "rpc_port", "pub_port", "extra_args")

_RANGE = {"type": "string", "pattern": r"^\d+\.\d+\.\d+\.\d+-\d+\.\d+\.\d+\.\d+$"}

OPTIONS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **{key: STL_OPTIONS["properties"][key] for key in SHARED},
        "client_range": {**_RANGE, "description": "client addresses, 'first-last', behind each "
                                                  "port pair's first port (the DUT routes them "
                                                  "there)",
                         "default": "16.0.0.1-16.0.0.254"},
        "server_range": {**_RANGE, "description": "server addresses, 'first-last', behind each "
                                                  "port pair's second port",
                         "default": "48.0.0.1-48.0.0.254"},
        "server_port": {"description": "the TCP or UDP port the servers listen on",
                        "type": "integer", "minimum": 1, "maximum": 65535, "default": 80},
        "wait_close_s": {"description": "after a trial's connections were all due (its "
                                        "duration and each one's hold), this long for the "
                                        "last of them to finish before TRex is stopped",
                         "type": "number", "minimum": 0, "default": 0.25},
        "latency_pps": {"description": "ICMP echoes a second TRex sends from each client port "
                                       "to the server side (its ASTF latency stream: the "
                                       "server port answers) in a trial that measures "
                                       "latency; 0: none",
                        "type": "integer", "minimum": 0, "maximum": 100000, "default": 100},
        "bidirectional": {**STL_OPTIONS["properties"]["bidirectional"],
                          "description": "port pairs carry connections both ways (ASTF: "
                                         "always client port to server port; kept for the "
                                         "port layout)"},
    },
}
