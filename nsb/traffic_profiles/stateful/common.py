"""What every stateful profile takes: the program each connection runs, its sizes, the
trial length, the loss tolerated; and the SessionLoad a trial offers from them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nsb.sessions import PROGRAMS, SessionLoad

PROGRAM = {"description": "what each connection does: tcp_cps (handshake, a request and "
                          "a response, close), udp_cps (a datagram each way), http (a "
                          "request and a response of response_bytes), long_lived (held "
                          "open hold_s), or a TRex ASTF profile file (relative to the task "
                          "file) run as it is",
           "type": "string", "minLength": 1, "default": "tcp_cps"}
OPTIONS = {
    "program": PROGRAM,
    "tunables": {"description": "a TRex ASTF profile file's tunables (its get_profile "
                                "arguments), e.g. ['--size', '1024']",
                 "type": "array", "items": {"type": "string"}, "default": []},
    "request_bytes": {"description": "bytes of each connection's request",
                      "type": "integer", "minimum": 1, "maximum": 1048576, "default": 64},
    "response_bytes": {"description": "bytes of each connection's response",
                       "type": "integer", "minimum": 1, "maximum": 16777216, "default": 64},
    "tolerated_loss_pct": {"description": "connections a trial may lose (not established, "
                                          "or never attempted) and pass, in % of those "
                                          "intended",
                           "type": "number", "minimum": 0, "maximum": 100, "default": 0.0},
    "strict_retransmissions": {"description": "a trial with a SYN sent again fails, though "
                                              "its connection came up",
                               "type": "boolean", "default": False},
    "duration": {"description": "seconds each trial opens connections for",
                 "type": "number", "exclusiveMinimum": 0, "default": 2.0},
    "reset_state": {"description": "every DUT forgets its sessions before each trial (a "
                                   "DUT nsb cannot reset is then refused); false: measure "
                                   "a DUT as it is, a trial inheriting the last one's state",
                    "type": "boolean", "default": True},
}

PRECISION = {"description": "the search stops when its interval is this narrow, in % of "
                             "its top",
             "type": "number", "exclusiveMinimum": 0, "maximum": 50, "default": 2.0}
SEARCH = {"description": "binsearch (RFC 2544's halvings from the upper bound) or "
                         "mlrsearch (FD.io CSIT's, as CSIT searches NAT44 CPS)",
          "enum": ["binsearch", "mlrsearch"], "default": "binsearch"}
OPTIONS_DUT_KEEPS = {"description": "the DUT's own count must reach this % of the sessions "
                                    "established (a DUT that keeps no state is not asked)",
                     "type": "number", "minimum": 0, "maximum": 100, "default": 100.0}


def session_load(profile, cps: float, **changes) -> SessionLoad:
    """The load a trial of ``profile`` offers at ``cps``: its program (a file relative
    to the task file), sizes and tunables."""
    o = profile.options
    program = o["program"]
    if program not in PROGRAMS and profile.run is not None:
        program = str(profile.run.task_relative(program))
    load = SessionLoad(program=program, cps=float(cps), request_bytes=o["request_bytes"],
                       response_bytes=o["response_bytes"], tunables=tuple(o["tunables"]))
    return replace(load, **changes)


def check_program(profile) -> None:
    """A program that is neither nsb's nor a file is one located line."""
    program = profile.options["program"]
    if program in PROGRAMS or profile.run is None:
        return
    if not Path(profile.run.task_relative(program)).is_file():
        raise profile.spec.options_where.error(
            f"'{program}' is none of nsb's programs ({', '.join(PROGRAMS)}) and no file "
            "(a TRex ASTF profile, relative to the task file)", "program")
