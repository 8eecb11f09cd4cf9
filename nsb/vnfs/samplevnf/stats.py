"""The SampleVNFs' stats commands read into KPIs under NSB's names.

NSB reports ``packets_in``, ``packets_fwd`` and ``packets_dropped`` from each
VNF's totals (vFW: pkts_received, pkts_fw_forwarded, pkts_drop_fw; vACL:
pkts_received, pkts_processed, pkts_drop; vCGNAPT: Received, Translated,
Dropped; UDP_Replay: the ports' rx, tx and rx+tx drops). nsb adds what the
totals say beside them (vFW's ACL verdicts, each action's packet count, each
UDP_Replay port's counters). None when the answer holds no totals.
"""

from __future__ import annotations

import re

PAIR = re.compile(r'"?\s*([A-Za-z_-]+)\s*"?\s*:\s*(\d+)')
ACTION = re.compile(r"Action ID:\s*(\d+),\s*packetCount:\s*(\d+)")
CGNAPT_TOTAL = re.compile(r"Received (\d+),\s*Missed (\d+),\s*Dropped (\d+),\s*"
                          r"Translated (\d+),\s*ingress (\d+),\s*egress (\d+)")
REPLAY_ROW = re.compile(r"^\s*(\d+)" + r"\s+(\d+)" * 5 + r"\s*$")


def _total_line(answer: str, marker: str) -> dict[str, int] | None:
    line = next((line for line in answer.splitlines() if marker in line), None)
    if line is None:
        return None
    return {key: int(value) for key, value in PAIR.findall(line.split(marker, 1)[1])}


def _actions(answer: str) -> dict[str, float]:
    return {f"action{int(n)}_packets": float(count) for n, count in ACTION.findall(answer)}


def vfw(answer: str) -> dict[str, float] | None:
    total = _total_line(answer, "VFW TOTAL:")
    if not total or "pkts_received" not in total:
        return None
    return {"packets_in": float(total["pkts_received"]),
            "packets_fwd": float(total.get("pkts_fw_forwarded", 0)),
            "packets_dropped": float(total.get("pkts_drop_fw", 0)),
            "packets_acl_forwarded": float(total.get("pkts_acl_forwarded", 0)),
            "packets_dropped_without_rule": float(total.get("pkts_drop_without_rule", 0)),
            "packets_dropped_no_arp": float(total.get("no_arp_entry", 0)),
            **_actions(answer)}


def acl(answer: str) -> dict[str, float] | None:
    total = _total_line(answer, "ACL TOTAL:")
    if not total or "pkts_received" not in total:
        return None
    processed = total.get("pkts_processed", total.get("tpkts_processed", 0))
    return {"packets_in": float(total["pkts_received"]), "packets_fwd": float(processed),
            "packets_dropped": float(total.get("pkts_drop", 0)), **_actions(answer)}


def cgnapt(answer: str) -> dict[str, float] | None:
    totals = CGNAPT_TOTAL.findall(answer)
    if not totals:
        return None
    received, missed, dropped, translated, ingress, egress = map(float, totals[-1])
    return {"packets_in": received, "packets_fwd": translated, "packets_dropped": dropped,
            "packets_missed": missed, "packets_ingress": ingress, "packets_egress": egress}


def udp_replay(answer: str) -> dict[str, float] | None:
    rows = [tuple(map(int, m.groups())) for m in map(REPLAY_ROW.match, answer.splitlines())
            if m]
    if not rows:
        return None
    kpis = {"packets_in": float(sum(r[1] for r in rows)),
            "packets_fwd": float(sum(r[2] for r in rows)),
            "packets_dropped": float(sum(r[3] + r[4] for r in rows))}
    for port, rx, tx, rx_drop, tx_drop, _arp in rows:
        kpis.update({f"port{port}_rx_packets": float(rx), f"port{port}_tx_packets": float(tx),
                     f"port{port}_dropped": float(rx_drop + tx_drop)})
    return kpis
