"""An address-learning trial (RFC 2889, sections 5.7 and 5.8): what it offers and what
it counts.

The test port first sends one frame, so the switch knows its address. The learning
port then sends ``count`` frames, one from each of ``count`` source MACs, to the test
port. The test port then sends one frame to each of those MACs. A switch that learned
an address forwards the frame to the learning port only; one it does not know (never
learned, or evicted when its table was full) it floods, and the monitor ports, to which
nothing is addressed, receive it. The frames the monitor ports received while the test
port sent are the addresses the switch did not hold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class AddressLoad:
    """``count`` addresses learnt at ``learning_pps`` on ``learning_port``, then tested
    at ``test_pps`` from ``test_port``; the generator's ports by interface name."""

    count: int
    learning_pps: float
    test_pps: float
    learning_port: str
    test_port: str
    monitor_ports: tuple[str, ...]
    first_mac: str = "02:4e:00:00:00:00"  # the addresses: this one and those after it
    settle_s: float = 0.2  # between learning and testing: the switch's upcalls done

    def mac(self, index: int) -> str:
        """The ``index``-th address (0-based)."""
        value = int(self.first_mac.replace(":", ""), 16) + index
        raw = f"{value:012x}"
        return ":".join(raw[k:k + 2] for k in range(0, 12, 2))

    def is_learnt_address(self, mac: str) -> bool:
        first = int(self.first_mac.replace(":", ""), 16)
        return 0 <= int(mac.replace(":", ""), 16) - first < self.count


@dataclass(frozen=True)
class AddressCounts:
    """What the generator's ports counted in each phase, and the switch's own table."""

    learning_sent: int  # learning frames the learning port sent
    learning_delivered: int  # of them, received by the test port
    learning_flooded: int  # received by the monitor ports (the test port's address lost)
    test_sent: int  # test frames the test port sent
    test_delivered: int  # received by the learning port (forwarded or flooded)
    flooded: int  # test frames the monitor ports received: addresses the switch lacked
    # the learning burst's pace on the wire, where it lasted long enough to time
    learning_pps_measured: float | None = None
    # the switch's own table after the trial (None: no switch nsb reads): its entries,
    # those of the trial's addresses, and its maximum when it states one
    table_entries: int | None = None
    table_learnt: int | None = None
    table_max: int | None = None

    @property
    def unknown_addresses(self) -> int:
        """Addresses the switch did not hold when tested: flooded test frames, counted at
        the monitor port that saw the most (each flooded frame reaches every one)."""
        return self.flooded

    def record(self) -> dict:
        return asdict(self)


def flooded_per_port(received: dict[str, int]) -> int:
    """Flooded frames from what each monitor port received: every port gets each."""
    return max(received.values(), default=0)
