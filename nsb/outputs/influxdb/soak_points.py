"""The tags and fields of a soak's interval (nsb_soak) and of PLRsearch's estimate after
a trial (nsb_plr): Grafana draws loss and latency over time while a soak runs."""

from __future__ import annotations

from nsb import frames
from nsb.events import PlrEstimate, SoakInterval
from nsb.outputs.influxdb import names as n


def parts(event: SoakInterval | PlrEstimate) -> tuple[str, dict, dict]:
    """(measurement, tags, fields) of one event; the latency fields are added by the
    point builder, as for trials."""
    tags = {n.FRAME_SIZE: event.frame_size, "trial_index": event.trial_index}
    if isinstance(event, SoakInterval):
        s = event.sample
        fields = {"interval": s.index, "start_s": s.start_s, "end_s": s.end_s,
                  "tx_packets": s.tx_packets, "rx_packets": s.rx_packets,
                  "lost_packets": s.lost_packets, n.LOSS_PCT: s.loss_pct,
                  n.TX_RATE_PPS: s.tx_pps, n.RX_RATE_PPS: s.rx_pps,
                  n.REQUESTED_RATE_PPS: event.rate_pps,
                  n.FRAME_BYTES: frames.avg_size(event.frame_size)}
        return n.SOAK, tags, fields
    fields = {"estimate_pps": event.estimate_pps, "stdev_pps": event.stdev_pps,
              "load_pps": event.load_pps, "duration_s": event.duration_s,
              "lost_packets": event.lost_packets, "target_loss_ratio": event.target_loss_ratio}
    for name, (mean, stdev) in event.fits.items():
        fields[f"{name}_estimate_pps"] = mean
        fields[f"{name}_stdev_pps"] = stdev
    return n.PLR, tags, fields
