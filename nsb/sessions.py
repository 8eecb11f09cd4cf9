"""A stateful trial: the load is a rate of connections (or sessions held) running a
program, and the result counts connections, not frames.

A trial's loss is what was intended and never established: connections attempted and
not established plus those never attempted (FD.io CSIT's definition for NAT44 CPS),
over the connections intended. A connection the generator never attempted because it
could not (its flow table or queue full, its schedule stretched) is the generator's
shortfall, not the DUT's: the trial is then generator-limited, as a stateless trial
the generator sent short is. The DUT's own count of the state it holds afterwards is
the witness beside the generator's counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# the programs nsb builds (nsb.vnfs.trex.astf_programs); a path is a TRex ASTF profile
PROGRAMS = ("tcp_cps", "udp_cps", "http", "long_lived", "udp_stream")


@dataclass(frozen=True)
class SessionLoad:
    """What a stateful trial offers: ``cps`` new connections per second for the trial's
    duration, each running ``program`` (a request of ``request_bytes`` and a response of
    ``response_bytes``, held open ``hold_s`` before it closes), or a TRex ASTF profile
    file with its ``tunables``."""

    program: str
    cps: float
    request_bytes: int = 64
    response_bytes: int = 64
    hold_s: float = 0.0
    tunables: tuple[str, ...] = ()
    # a program whose client keeps sending: each session's data rate, packets per second
    # (stateful throughput: the sessions' data offered on top of holding them), for
    # ``data_s`` seconds once every session is open (udp_stream; long_lived: while held)
    data_pps_per_session: float = 0.0
    data_s: float = 0.0
    # the DUT forgets its sessions before the trial (False: a soak's later intervals,
    # which measure the DUT with what the earlier ones left)
    fresh: bool = True

    @property
    def udp(self) -> bool:
        return self.program in ("udp_cps", "udp_stream")

    @property
    def data_packets_per_session(self) -> int:
        """Datagrams of data each udp_stream session sends after its handshake: enough
        for ``data_s`` at its exact rate (the last gap may make it a little longer)."""
        if self.data_pps_per_session <= 0:
            return 0
        return max(1, math.ceil(self.data_pps_per_session * self.data_s - 1e-9))

    @property
    def data_seconds(self) -> float:
        """How long each session's data lasts: its datagrams at its rate."""
        if self.data_pps_per_session <= 0:
            return 0.0
        return self.data_packets_per_session / self.data_pps_per_session


@dataclass(frozen=True)
class SessionCounts:
    """A stateful trial's connections by the generator's counters, and the DUT's own
    count of the sessions it held at the trial's end (None: no stateful DUT)."""

    intended: int  # connections the trial meant to open: cps x duration
    attempted: int  # the client started (a SYN sent, a first datagram sent)
    established: int  # connected (TCP) or answered (UDP)
    # connections attempted and lost, by reason (not_established, reset, timed_out, ...)
    failed: dict[str, int] = field(default_factory=dict)
    # connections whose SYN (or request) was sent again and that still connected: they
    # count as established; a strict judge fails on them
    retransmitted: int = 0
    # why connections were never attempted, by the generator's own error counters
    generator_errors: dict[str, int] = field(default_factory=dict)
    active_at_end: int = 0  # flows still open when the trial's counters were read
    duration_s: float = 0.0  # the seconds the generator sent new connections for
    dut_sessions: int | None = None  # the DUT's count after the trial (its witness)
    # per direction bytes and packets of the sessions' data (client to server, back)
    bytes: dict[str, int] = field(default_factory=dict)
    # the data a stream of datagrams carried once its sessions were open (udp_stream):
    # intended, sent by the client side, received by the server side; {}: none
    data: dict[str, int] = field(default_factory=dict)

    @property
    def data_lost(self) -> int:
        """Data datagrams sent and not received (the DUT's loss of the sessions' data)."""
        return max(0, self.data.get("sent", 0) - self.data.get("received", 0))

    @property
    def data_loss_pct(self) -> float:
        sent = self.data.get("sent", 0)
        return 100.0 * self.data_lost / sent if sent else 0.0

    @property
    def never_attempted(self) -> int:
        return max(0, self.intended - self.attempted)

    @property
    def lost(self) -> int:
        """Intended and not established: failed plus never attempted."""
        return max(0, self.intended - self.established)

    @property
    def loss_pct(self) -> float:
        return 100.0 * self.lost / self.intended if self.intended > 0 else 100.0

    @property
    def cps(self) -> float:
        """Connections established per second of the trial's traffic."""
        return self.established / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def offered_cps(self) -> float:
        """Connections attempted per second of the trial's traffic: the rate the
        generator offered by its own counters and clock."""
        return self.attempted / self.duration_s if self.duration_s > 0 else 0.0

    def record(self) -> dict:
        """As results.json holds it."""
        return {"intended": self.intended, "attempted": self.attempted,
                "established": self.established, "never_attempted": self.never_attempted,
                "failed": dict(self.failed), "retransmitted": self.retransmitted,
                "generator_errors": dict(self.generator_errors),
                "active_at_end": self.active_at_end, "duration_s": self.duration_s,
                "cps": self.cps, "offered_cps": self.offered_cps, "loss_pct": self.loss_pct,
                "dut_sessions": self.dut_sessions,
                "bytes": dict(self.bytes), **({"data": dict(self.data)} if self.data else {})}
