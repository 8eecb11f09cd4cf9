"""Overload-recovery answers (the ``overload_recovery`` profile) in the summary: per frame
size the steady and the overload rate, how long the overload lasted, and the time until
no frame was lost and until latency was back, mean and spread of N trials."""

from __future__ import annotations

from nsb.report.reset_table import spread_text

HEADERS = ["Frame (B)", "Steady / overload (pps)", "Overload (s)", "Trials",
           "No more loss after (s)", "Latency back after (s)", "Recovered"]


def is_overload(result: dict) -> bool:
    return isinstance(result.get("overload"), dict)


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for result in results:
        o = result["overload"]
        out.append([str(result.get("frame_size", "-")),
                    f"{o['steady_pps']:,.0f} / {o['overload_pps']:,.0f}",
                    f"{o['overload_s']:g}", str(len(o["trials"])),
                    spread_text(o["loss_recovery_s"]), spread_text(o["latency_recovery_s"]),
                    "yes" if o["recovered"] else "no"])
    return out
