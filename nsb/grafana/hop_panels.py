"""Where the frames died (``nsb_hop``): the frames each hop lost, by kind, summed over
the selected tasks' trials (in the time range), and trial by trial."""

from __future__ import annotations

from grafana_foundation_sdk.builders import barchart, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.panels import _legend, _tooltip
from nsb.grafana.queries import InfluxQL, task_filter
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import ident, select

_LOSSES = task_filter([f"{ident(m.DROP_KIND)} != 'total'"])


def lost_per_hop(ds: dm.DataSourceRef) -> barchart.Panel:
    """The hops that lost frames, and how: the loss budgets of the trials summed."""
    query = select(m.HOP, [(f"sum({ident(m.LOST_PACKETS)})", "lost")], _LOSSES,
                   group_by=[m.HOP_TAG, m.DROP_KIND], time_filter=True)
    return (barchart.Panel().title("Frames lost per hop")
            .description("Where the frames of the selected tasks' trials died: each trial's "
                         "loss laid along its path (generator port, links, each DUT or "
                         "vSwitch port in and out), summed per hop and kind (imissed: the "
                         "DUT did not poll fast enough; forwarding: received but never "
                         "sent; link; tx dropped ...).")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
            .x_field(m.HOP_TAG).unit("short").axis_label("frames lost")
            .legend(_legend()).tooltip(_tooltip()).span(12).height(9))


def lost_per_trial(ds: dm.DataSourceRef) -> timeseries.Panel:
    """Each hop's loss, trial by trial."""
    query = select(m.HOP, [(f"sum({ident(m.LOST_PACKETS)})", "lost")], _LOSSES,
                   group_by=[m.HOP_TAG, m.DROP_KIND], time_filter=True, interval=True)
    return (timeseries.Panel().title("Frames lost per hop, trial by trial")
            .description("The frames each hop lost in each trial (its kind of drop in the "
                         "legend).")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias("$tag_hop ($tag_kind)")
                         .datasource(ds))
            .unit("short").min(0).draw_style(cm.GraphDrawStyle.POINTS).point_size(6)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))
