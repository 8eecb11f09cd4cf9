"""The answers of tests under change in one table (``nsb_result``'s fields, flattened by
the InfluxDB output from each answer): reset and blocked time, overload recovery, a
noisy neighbour's drop, a switch's MAC capacity and learning rate.

A task with none of these answers writes none of the fields: the table stays empty.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import table
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.queries import InfluxQL, task_filter
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import ident, select

CHANGE_COLUMNS = [  # (field, how it is combined over iterations, display name, unit)
    (m.RESET_TIME_S, "mean", "Reset time", "s"),
    (m.BLOCKED_TIME_S, "mean", "Blocked time", "s"),
    (m.OVERLOAD_RECOVERY_S, "mean", "Overload recovery", "s"),
    (m.NEIGHBOUR_DROP_PCT, "mean", "Neighbour drop", "percent"),
    (m.MAC_CAPACITY, "min", "MAC capacity", "none"),
    (m.MAC_LEARNING_RATE_PPS, "min", "MAC learning rate", "pps"),
]


def change_answers(ds: dm.DataSourceRef) -> table.Panel:
    """Each answer under change of the selected tasks, one row per task and scenario."""
    columns = [(f"{how}({ident(name)})", name) for name, how, _, _ in CHANGE_COLUMNS]
    any_answer = " OR ".join(f"{ident(name)} >= 0" for name, _, _, _ in CHANGE_COLUMNS)
    query = select(m.RESULT, columns, task_filter([f"({any_answer})"]),
                   group_by=[m.TASK_ID, m.SCENARIO, m.LIMITED_BY])
    panel = (table.Panel().title("Answers under change (reset, overload, neighbour, MAC)")
             .description("Each answer of a test under change (mean over iterations; the "
                          "least for a MAC table): reset time by frame loss (RFC 6201), "
                          "a reconfiguration's blocked time, the overload's recovery, a "
                          "noisy neighbour's drop (0 within the runs' spread), a learning "
                          "switch's capacity and learning rate (RFC 2889).")
             .datasource(ds).with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
             .transformations([dm.DataTransformerConfig(
                 id_val="organize", options={"excludeByName": {"Time": True}})])
             .show_header(True).cell_options(cm.TableAutoCellOptions()).decimals(3)
             .span(24).height(7)
             .override_by_name(m.TASK_ID, [dm.DynamicConfigValue("displayName", "Task")])
             .override_by_name(m.LIMITED_BY, [dm.DynamicConfigValue("displayName",
                                                                    "Limited by")]))
    for name, _, title, unit in CHANGE_COLUMNS:
        panel = panel.override_by_name(name, [dm.DynamicConfigValue("displayName", title),
                                              dm.DynamicConfigValue("unit", unit)])
    return panel
