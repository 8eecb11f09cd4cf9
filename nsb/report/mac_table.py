"""Address-learning answers (the ``mac_learning`` profile, RFC 2889) in the summary: per
frame size the addresses held, the table's capacity by the switch's own count, and the
learning rate at a count within it."""

from __future__ import annotations

HEADERS = ["Frame (B)", "Addresses held", "Table capacity (switch's count / max)",
           "First flooding at", "Learning rate (addresses/s)", "Limited by"]


def is_mac_learning(result: dict) -> bool:
    return isinstance(result.get("mac_learning"), dict)


def _number(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for result in results:
        m = result["mac_learning"]
        table = f"{_number(m.get('mac_capacity'))} ({_number(m.get('table_entries'))} / " \
                f"{_number(m.get('table_max'))})"
        rate = _number(m.get("learning_rate_pps"))
        if m.get("learning_rate_pps") is not None:
            rate += f" at {m.get('rate_addresses', 0):,} addresses"
        out.append([str(result.get("frame_size", "-")), _number(m.get("learned_addresses")),
                    table, _number(m.get("first_failing_addresses")), rate,
                    str(result.get("limited_by", "-"))])
    return out
