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
        fields = {n.INTERVAL: s.index, n.START_S: s.start_s, n.END_S: s.end_s,
                  "tx_packets": s.tx_packets, "rx_packets": s.rx_packets,
                  n.LOST_PACKETS: s.lost_packets, n.LOSS_PCT: s.loss_pct,
                  n.TX_RATE_PPS: s.tx_pps, n.RX_RATE_PPS: s.rx_pps,
                  n.REQUESTED_RATE_PPS: event.rate_pps,
                  n.FRAME_BYTES: frames.avg_size(event.frame_size)}
        return n.SOAK, tags, fields
    fields = {n.ESTIMATE_PPS: event.estimate_pps, n.STDEV_PPS: event.stdev_pps,
              n.LOAD_PPS: event.load_pps, n.DURATION_S: event.duration_s,
              n.LOST_PACKETS: event.lost_packets, n.TARGET_LOSS_RATIO: event.target_loss_ratio}
    for name, (mean, stdev) in event.fits.items():
        fields[f"{name}_estimate_pps"] = mean
        fields[f"{name}_stdev_pps"] = stdev
    return n.PLR, tags, fields
