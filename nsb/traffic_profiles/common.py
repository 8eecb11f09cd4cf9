"""Option schema pieces shared by profiles (NSB parameter names and units)."""

PACKET_SIZES = {"description": "frame sizes in bytes, one search each; IMIX sends the imix mix",
                "type": "array", "minItems": 1,
                "items": {"anyOf": [{"type": "integer", "minimum": 64, "maximum": 9216},
                                    {"type": "string", "pattern": "^[Ii][Mm][Ii][Xx]$"}]},
                "default": [64, 128, 256, 512, 1024, 1280, 1518]}
# what `IMIX` in packet_sizes sends: weights by frame size or an RFC 6985 genome
IMIX = {"description": "the mix IMIX sends: weights by frame size, or an RFC 6985 genome",
        "anyOf": [{"type": "object", "minProperties": 1, "additionalProperties": False,
                   "patternProperties": {"^[0-9]+$": {"type": "integer", "minimum": 1}}},
                  {"type": "string", "pattern": "^[a-i]{1,128}$"}],
        "default": {"64": 7, "594": 4, "1518": 1}}
DURATION = {"description": "seconds per trial",
            "type": "number", "exclusiveMinimum": 0, "default": 30}
INTERFACE_SPEED = {"description": "line rate of the ports in Gbit/s (rates in % are of it)",
                   "type": "number", "exclusiveMinimum": 0, "default": 10}
TOLERATED_LOSS = {"description": "loss a trial may have and pass, in % of the frames sent",
                  "type": "number", "minimum": 0, "maximum": 100, "default": 0.0}
FLOWS = {"description": "flows per direction (default: the generator's flows option)",
         "type": "integer", "minimum": 1}
UPPER_BOUND = {"description": "highest rate tried, in % of line rate",
               "type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 100.0}


def positive_lower_bound(default: float) -> dict:
    """A lower bound in % of line rate for searches that cannot start from 0."""
    return {"description": "lowest rate tried, in % of line rate",
            "type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": default}
NO_LOAD_PPS = 9000.0  # per sending port: CSIT's latency streams, 9 kpps per direction
NO_LOAD = {"description": "frames per second per sending port of the no-load latency trial "
                          "(latency_at 0: latency frames only; CSIT sends 9,000 per "
                          "direction)",
           "type": "number", "exclusiveMinimum": 0, "default": NO_LOAD_PPS}
LATENCY_AT = {"description": "latency trials at these % of the throughput found; 0 is no load "
                             "(latency frames alone at no_load_pps), as CSIT reports 0, 10, 50 "
                             "and 90",
              "type": "array", "items": {"type": "number", "minimum": 0, "maximum": 100},
              "default": []}
