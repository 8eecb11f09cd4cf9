"""Stateful answers as a table of their own: what the published stateful reports
print (connections per second, sessions held, what failed), not frames."""

from __future__ import annotations

HEADERS = ["Test", "Program", "Answer", "Connections/s", "Loss (%)", "Sessions (DUT)",
           "Failed / never attempted", "Limited by"]


def is_stateful(result: dict) -> bool:
    return isinstance(result.get("stateful"), dict)


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for r in results:
        s = r["stateful"]
        counts = s.get("counts") or {}
        failed = sum((counts.get("failed") or {}).values()) if counts else 0
        program = str(s.get("program", "-")).rsplit("/", 1)[-1]
        dut = s.get("dut_sessions")
        out.append([
            s["kind"], program, answer(s),
            f"{s['cps']:,.0f}" if s.get("cps") is not None else "-",
            f"{s['data_loss_pct']:.4f}" if s.get("data_loss_pct") is not None
            else f"{counts['loss_pct']:.4f}" if counts else "-",
            f"{dut:,}" if dut is not None else "-",
            f"{failed:,} / {counts.get('never_attempted', 0):,}" if counts else "-",
            r["limited_by"] + (" (unconfirmed)" if r.get("warnings") else ""),
        ])
    return out


def answer(s: dict) -> str:
    """A stateful answer in its own unit: sessions held, or connections a second."""
    if s["kind"] == "concurrent_sessions" and s.get("sessions") is not None:
        return f"{s['sessions']:,} sessions"
    if s["kind"] == "stateful_throughput" and s.get("data_pps") is not None:
        return f"{s['data_pps']:,.0f} pps over {s.get('sessions') or 0:,} sessions"
    if s.get("cps") is not None:
        return f"{s['cps']:,.0f} connections/s"
    return "-"


def lines(results: list[dict]) -> list[str]:
    """Under the table: the generator's ceiling an answer was held against, and each
    answer's counts by reason."""
    out = []
    for r in results:
        s = r["stateful"]
        counts = s.get("counts") or {}
        if s.get("generator_ceiling_cps"):
            out.append(f"{s['kind']}: the generator's own ceiling "
                       f"{s['generator_ceiling_cps']:,.0f} connections/s (without the DUT)")
        reasons = ", ".join(f"{k.replace('_', ' ')} {v:,}"
                            for k, v in sorted((counts.get("failed") or {}).items()))
        if reasons:
            out.append(f"{s['kind']}: failed: {reasons}")
        if counts.get("retransmitted"):
            out.append(f"{s['kind']}: {counts['retransmitted']:,} SYN retransmissions "
                       "(connected all the same)")
    return out
