"""Service chains (``nsb_result_chain``, ``nsb_trial_chain``): each chain's share of the
answer per frame size, and each chain's loss trial by trial, so the chain that gave way
first stands out."""

from __future__ import annotations

from grafana_foundation_sdk.builders import barchart, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.panels import _legend, _tooltip, _transform
from nsb.grafana.queries import InfluxQL, field, mean, task_filter
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import select


def throughput_per_chain(ds: dm.DataSourceRef) -> barchart.Panel:
    """Bars per frame size, one per chain (mean over the selected tasks' iterations)."""
    query = select(m.RESULT_CHAIN, [(mean(m.THROUGHPUT_PPS), m.THROUGHPUT_PPS)],
                   task_filter(), group_by=[m.FRAME_SIZE, m.CHAIN])
    return (barchart.Panel().title("Throughput per service chain (packets/s)")
            .description("Each chain's share of the answer (chains: N): the frames it sent "
                         "at the highest total rate at which every chain kept within the "
                         "tolerated loss.")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
            .transformations([_transform("groupingToMatrix", {
                "columnField": m.CHAIN, "rowField": m.FRAME_SIZE,
                "valueField": m.THROUGHPUT_PPS, "emptyValue": "null"})])
            .unit("pps").min(0).axis_label("packets/s").legend(_legend())
            .tooltip(_tooltip()).show_value(cm.VisibilityMode.AUTO).span(12).height(9))


def loss_per_chain(ds: dm.DataSourceRef) -> timeseries.Panel:
    """Each chain's loss in each trial."""
    query = select(m.TRIAL_CHAIN, [(field(m.LOSS_PCT), "loss")], task_filter(),
                   group_by=[m.CHAIN, m.FRAME_SIZE], time_filter=True)
    return (timeseries.Panel().title("Loss per service chain, trial by trial")
            .description("Each chain's frame loss in each trial, in % of what its ports "
                         "sent: a trial fails when any chain is over the tolerance.")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A")
                         .alias("chain $tag_chain ($tag_frame_size B)").datasource(ds))
            .unit("percent").min(0).draw_style(cm.GraphDrawStyle.POINTS).point_size(6)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))
