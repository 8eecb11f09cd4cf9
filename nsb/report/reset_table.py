"""Reset-time answers (the ``reset_time`` profile) in the summary: per frame size the
event, the rate it ran at and the outage by each method, mean and spread of N trials."""

from __future__ import annotations

HEADERS = ["Frame (B)", "Rate (pps)", "Event", "Trials", "Reset time, frame loss (s)",
           "Reset time, timestamps (s)", "Every frame back after (s)", "Recovered",
           "DUT's own silence (s)"]


def is_reset(result: dict) -> bool:
    return isinstance(result.get("reset"), dict)


def spread_text(values: dict) -> str:
    if not values:
        return "-"
    text = f"{values['mean']:.3f}"
    return text + (f" ± {values['stdev']:.3f}" if values.get("trials", 1) > 1 else "")


def _event(event: dict) -> str:
    if event.get("type") == "pause":
        return f"{event.get('vnf', 'DUT')} paused {event.get('pause_ms', 500):g} ms"
    if event.get("type") == "link_flap":
        return (f"{event.get('vnf', 'DUT')} {event.get('interface', 'port')} down "
                f"{event.get('down_ms', 500):g} ms")
    if event.get("type") == "restart":
        return f"{event.get('vnf', 'DUT')} restarted (SIG{event.get('signal', 'TERM')})"
    if event.get("type") == "rule_churn":
        return (f"{event.get('changes_per_s', 100):g} rule changes/s for "
                f"{event.get('churn_s', 2):g} s ({event.get('rules_installed', 1000)} rules)")
    return str(event.get("type", "-"))


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for result in results:
        reset = result["reset"]
        out.append([str(result.get("frame_size", "-")),
                    f"{result.get('offered_pps', 0):,.0f}", _event(reset.get("event", {})),
                    str(len(reset.get("trials", []))), spread_text(reset.get("frame_loss_s")),
                    spread_text(reset.get("timestamp_s")),
                    spread_text(reset.get("full_rate_back_s")),
                    "yes" if reset.get("recovered") else "no",
                    spread_text(reset.get("dut_silent_s"))])
    return out
