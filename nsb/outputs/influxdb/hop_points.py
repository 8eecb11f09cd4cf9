"""The tags and fields of where a trial's frames died (nsb_hop): one point per loss of
a direction's path (its hop and kind, the frames lost there), and one per direction
with what was sent, received and left unaccounted; Grafana's path panel sums them by
hop."""

from __future__ import annotations

from nsb.events import TrialDone
from nsb.outputs.influxdb import names as n


def parts(event: TrialDone) -> list[tuple[dict, dict]]:
    """(tags, fields) per point; none for a trial without a path."""
    if event.path is None:
        return []
    found = []
    frame = event.result.trial.frame_size
    for budget in event.path.budgets:
        base = {n.FRAME_SIZE: frame, n.VERDICT: event.verdict, n.PATH: budget.path}
        index = {"trial_index": event.trial_index, "iteration": event.iteration}
        for loss in budget.losses:
            found.append(({**base, n.HOP_TAG: loss.hop, n.DROP_KIND: loss.kind},
                          {**index, n.LOST_PACKETS: loss.frames}))
        found.append(({**base, n.HOP_TAG: "path", n.DROP_KIND: "total"},
                      {**index, "tx_packets": budget.sent, "rx_packets": budget.received,
                       n.LOST_PACKETS: budget.lost, n.UNACCOUNTED: budget.unaccounted}))
    return found
