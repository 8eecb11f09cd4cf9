"""Panels of stateful trials and answers: per trial the connection rate asked, offered
and established, the sessions asked, established and held by the DUT by its own count,
the connections lost by reason (``nsb_trial_sessions``); the stateful answers of the
selected tasks (``nsb_result``'s stateful fields) and their trend over runs.

A task of frames writes none of these fields: its panels stay empty.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import table, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.panels import (
    GREEN,
    RED,
    SCENARIO_VAR,
    TEST_CASE_VAR,
    _color,
    _legend,
    _tooltip,
)
from nsb.grafana.queries import InfluxQL, field, matches, mean, task_filter
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import ident, select

_GROUPS = [m.TASK_ID, m.SCENARIO, m.PROGRAM]
_ALIAS = "$col ($tag_task_id $tag_scenario $tag_program)"


def _per_trial(ds: dm.DataSourceRef, title: str, description: str, unit: str,
               columns: list[tuple[str, str]]) -> timeseries.Panel:
    query = select(m.TRIAL_SESSIONS, columns, task_filter(), group_by=_GROUPS,
                   time_filter=True)
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias(_ALIAS).datasource(ds))
            .unit(unit).min(0).draw_style(cm.GraphDrawStyle.POINTS)
            .show_points(cm.VisibilityMode.ALWAYS).point_size(7)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))


def connections_per_trial(ds: dm.DataSourceRef) -> timeseries.Panel:
    """The CPS search: each trial's connection rate asked, offered and established."""
    return _per_trial(
        ds, "Connections per second per trial: asked vs established",
        "Each point is one stateful trial: the connection rate the profile asked for, "
        "what the generator offered by its own counters and clock, and what was "
        "established.", "cps",
        [(field(m.CPS_ASKED), "asked"), (field(m.OFFERED_CPS), "offered"),
         (field(m.CPS), "established")]
    ).override_by_regexp("^established .*", [_color(GREEN)])


def sessions_per_trial(ds: dm.DataSourceRef) -> timeseries.Panel:
    """Concurrent sessions: each trial's sessions asked, established, held by the DUT."""
    return _per_trial(
        ds, "Sessions per trial: asked vs held by the DUT",
        "Each point is one stateful trial: the connections it meant to open (intended), "
        "those established, and the sessions the DUT held by its own count (conntrack, "
        "a NAT's table).", "none",
        [(field(m.INTENDED), "asked"), (field(m.ESTABLISHED), "established"),
         (field(m.DUT_SESSIONS), "held by the DUT")])


def failed_per_trial(ds: dm.DataSourceRef) -> timeseries.Panel:
    """The connections each trial lost, by reason, and those never attempted."""
    return (_per_trial(
        ds, "Connections lost per trial, by reason",
        "Per stateful trial the connections attempted and not established by reason "
        "(failed_<reason>; failed_total is their sum), and those never attempted (the "
        "generator's shortfall, not the DUT's).", "none",
        [(f"/{m.FAILED_FIELD_REGEX}/", ""), (field(m.NEVER_ATTEMPTED), m.NEVER_ATTEMPTED)])
        .override_by_regexp(f"^{m.NEVER_ATTEMPTED} .*", [_color(RED)]))


STATEFUL_COLUMNS = [  # (expression, column, display name, unit)
    (f"last({ident(m.STATEFUL_KIND)})", m.STATEFUL_KIND, "Test", "string"),
    (mean(m.CPS), m.CPS, "Connections/s", "cps"),
    (mean(m.ESTABLISHED_CPS), m.ESTABLISHED_CPS, "Established/s", "cps"),
    (mean(m.SESSIONS), m.SESSIONS, "Sessions", "none"),
    (mean(m.DUT_SESSIONS), m.DUT_SESSIONS, "DUT sessions", "none"),
    (mean(m.FAILED_TOTAL), m.FAILED_TOTAL, "Failed", "none"),
    (f"max({ident(m.GENERATOR_CEILING_CPS)})", m.GENERATOR_CEILING_CPS,
     "Generator's ceiling", "cps"),
]


def stateful_answers(ds: dm.DataSourceRef) -> table.Panel:
    """The stateful answers of the selected tasks, in connections and sessions."""
    query = select(m.RESULT, [(expr, column) for expr, column, _, _ in STATEFUL_COLUMNS],
                   task_filter([f"{ident(m.CPS)} >= 0"]),
                   group_by=[m.TASK_ID, m.SCENARIO, m.LIMITED_BY])
    panel = (table.Panel().title("Stateful answers (connections and sessions)")
             .description("Each stateful answer (mean over iterations): connections a "
                          "second offered and established, sessions held, the DUT's own "
                          "count, connections failed at the answer, and what limited it.")
             .datasource(ds).with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
             .transformations([dm.DataTransformerConfig(
                 id_val="organize", options={"excludeByName": {"Time": True}})])
             .show_header(True).cell_options(cm.TableAutoCellOptions()).decimals(0)
             .span(24).height(7)
             .override_by_name(m.TASK_ID, [dm.DynamicConfigValue("displayName", "Task")])
             .override_by_name(m.LIMITED_BY, [dm.DynamicConfigValue("displayName",
                                                                    "Limited by")]))
    for _, column, title, unit in STATEFUL_COLUMNS:
        panel = panel.override_by_name(column, [dm.DynamicConfigValue("displayName", title),
                                                dm.DynamicConfigValue("unit", unit)])
    return panel


def trend(ds: dm.DataSourceRef, column: str, title: str, unit: str,
          description: str) -> timeseries.Panel:
    """One point per run of the selected test cases: a stateful answer over time."""
    where = [matches(m.TEST_CASE, TEST_CASE_VAR), matches(m.SCENARIO, SCENARIO_VAR)]
    query = select(m.RESULT, [(field(column), column)], where,
                   group_by=[m.TEST_CASE, m.SCENARIO], time_filter=True)
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias("$col ($tag_test_case "
                                                            "$tag_scenario)").datasource(ds))
            .unit(unit).min(0).draw_style(cm.GraphDrawStyle.LINE)
            .show_points(cm.VisibilityMode.ALWAYS).point_size(7)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))
