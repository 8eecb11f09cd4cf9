"""Panels of long trials: a soak's loss, rates and latency per interval (``nsb_soak``)
and PLRsearch's critical-load estimate with its spread after each trial (``nsb_plr``).

A soak writes an interval as soon as it is counted, so with the dashboard's
auto-refresh loss and latency appear while the soak still runs.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.panels import SERIES, _legend, _log10, _tooltip
from nsb.grafana.queries import InfluxQL, field, task_filter
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import select

_GROUPS = [m.TASK_ID, m.SCENARIO, m.FRAME_SIZE]


def _series(ds: dm.DataSourceRef, measurement: str, title: str, description: str,
            unit: str, columns: list[tuple[str, str]]) -> timeseries.Panel:
    query = select(measurement, columns, task_filter(), group_by=_GROUPS, time_filter=True)
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias(SERIES).datasource(ds))
            .unit(unit).draw_style(cm.GraphDrawStyle.LINE).show_points(cm.VisibilityMode.ALWAYS)
            .point_size(4).legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))


def loss_per_interval(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _series(ds, m.SOAK, "Soak: loss per interval", "Frames lost in each interval "
                   "of the long trial, in % of the frames sent in it (frames in flight at a "
                   "boundary belong to the interval that sent them).", "percent",
                   [(field(m.LOSS_PCT), "loss"), (field(m.LOST_PACKETS), "lost frames")]
                   ).min(0)


def rates_per_interval(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _series(ds, m.SOAK, "Soak: offered, sent and received rate per interval",
                   "The rate the soak offers and what the generator sent and got back in "
                   "each interval.", "pps",
                   [(field(m.REQUESTED_RATE_PPS), "offered"), (field(m.TX_RATE_PPS), "sent"),
                    (field(m.RX_RATE_PPS), "received")]).min(0)


def latency_per_interval(ds: dm.DataSourceRef, stats: list[str]) -> timeseries.Panel:
    return _series(ds, m.SOAK, "Soak: latency per interval", "One-way latency of the "
                   "frames timestamped in each interval; logarithmic axis: outliers show "
                   "as spikes of max and the high percentiles.", "µs",
                   [(field(m.latency_field(stat)), stat) for stat in stats]
                   ).scale_distribution(_log10())


def plr_estimate(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _series(ds, m.PLR, "PLRsearch: critical load after each trial",
                   "The estimate of the load the DUT sustains at the target loss ratio "
                   "and its spread (estimate +/- one standard deviation), and the load each "
                   "trial offered.", "pps",
                   [(field(m.ESTIMATE_PPS), "estimate"),
                    (f"{field(m.ESTIMATE_PPS)} - {field(m.STDEV_PPS)}", "estimate - stdev"),
                    (f"{field(m.ESTIMATE_PPS)} + {field(m.STDEV_PPS)}", "estimate + stdev"),
                    (field(m.LOAD_PPS), "offered load")]).min(0)
