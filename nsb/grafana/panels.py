"""The panels of the nsb dashboards, built with grafana-foundation-sdk.

Each function returns a panel builder for one measured quantity; the queries are
InfluxQL over the measurements of :mod:`nsb.outputs.influxdb.names`, filtered by the
``$task_id`` and ``$scenario`` template variables.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import barchart, table, timeseries
from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.queries import (
    InfluxQL,
    InfluxQLAnnotation,
    field,
    matches,
    mean,
    task_filter,
)
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import ident, select

TASK_VAR = "task_id"
SCENARIO_VAR = "scenario"
TEST_CASE_VAR = "test_case"
# one series per frame size, task and scenario
SERIES = "$tag_frame_size B $col ($tag_task_id $tag_scenario)"
NFVI_SOURCES = f"{ident(m.SOURCE)} =~ /^{m.NFVI_SOURCE_PREFIX}/"
NODE_SOURCES = f"{ident(m.SOURCE)} =~ /^{m.NODE_SOURCE_PREFIX}/"
GREEN, RED = "green", "red"


def _transform(id_val: str, options: dict) -> dm.DataTransformerConfig:
    return dm.DataTransformerConfig(id_val=id_val, options=options)


FRAME_ORDER_COLUMN = (mean(m.FRAME_BYTES), m.FRAME_BYTES)  # select it to order by it


def frame_size_order() -> list[dm.DataTransformerConfig]:
    """Rows by mean frame size (InfluxDB returns tag values sorted as text, and the
    frame_size tag can be a mix's label, IMIX); the ordering column is then hidden."""
    return [_transform("sortBy", {"fields": {}, "sort": [{"field": m.FRAME_BYTES,
                                                          "desc": False}]}),
            _transform("organize", {"excludeByName": {"Time": True, m.FRAME_BYTES: True}})]


def _legend(as_table: bool = False) -> cb.VizLegendOptions:
    legend = (cb.VizLegendOptions().show_legend(True).placement(cm.LegendPlacement.BOTTOM)
              .display_mode(cm.LegendDisplayMode.TABLE if as_table else cm.LegendDisplayMode.LIST))
    return legend.calcs(["lastNotNull", "max"] if as_table else [])


def _tooltip() -> cb.VizTooltipOptions:
    return cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING)


def _log10() -> cb.ScaleDistributionConfig:
    return cb.ScaleDistributionConfig().type(cm.ScaleDistribution.LOG).log(10)


def _color(name: str) -> dm.DynamicConfigValue:
    return dm.DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": name})


def throughput_by_frame_size(ds: dm.DataSourceRef, value: str, title: str, unit: str,
                             axis: str, description: str) -> barchart.Panel:
    """Bars per frame size, one per selected task: side by side comparisons."""
    query = select(m.RESULT, [(mean(value), value), FRAME_ORDER_COLUMN], task_filter(),
                   group_by=[m.FRAME_SIZE, m.TASK_ID, m.SCENARIO])
    panel = (barchart.Panel().title(title).description(description).datasource(ds)
             .with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
             .transformations([*frame_size_order(), _transform("groupingToMatrix", {
                 "columnField": m.TASK_ID, "rowField": m.FRAME_SIZE, "valueField": value,
                 "emptyValue": "null"})])
             .unit(unit).min(0).axis_label(axis).legend(_legend())
             .tooltip(_tooltip()).show_value(cm.VisibilityMode.AUTO).span(12).height(9))
    if unit == "percent":
        panel = panel.max(100)
    return panel


def latency_by_frame_size(ds: dm.DataSourceRef, stats: list[str]) -> barchart.Panel:
    """Latency statistics per frame size, one panel per selected task (a repeat)."""
    columns = [(mean(m.latency_field(stat)), stat) for stat in stats] + [FRAME_ORDER_COLUMN]
    query = select(m.RESULT, columns, task_filter(), group_by=[m.FRAME_SIZE])
    return (barchart.Panel().title(f"Latency vs frame size: task ${TASK_VAR}")
            .description("One-way latency of the probe stream at the throughput rate, per "
                         "frame size (mean over iterations); logarithmic axis.")
            .datasource(ds).repeat(TASK_VAR).repeat_direction("h").max_per_row(2)
            .with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
            .transformations(frame_size_order())
            .x_field(m.FRAME_SIZE).unit("µs").axis_label("latency").scale_distribution(_log10())
            .legend(_legend()).tooltip(_tooltip()).span(24).height(9))


RESULT_COLUMNS = [  # (expression, column, display name, unit)
    (mean(m.THROUGHPUT_PPS), m.THROUGHPUT_PPS, "Throughput", "pps"),
    (mean(m.THROUGHPUT_MBPS), m.THROUGHPUT_MBPS, "Throughput (Mbit/s)", "Mbits"),
    (mean(m.LINE_RATE_PCT), m.LINE_RATE_PCT, "Line rate", "percent"),
    (mean(m.LOSS_PCT), m.LOSS_PCT, "Loss", "percent"),
    (mean(m.latency_field("avg")), m.latency_field("avg"), "Latency avg", "µs"),
    (mean(m.latency_field("p99")), m.latency_field("p99"), "Latency p99", "µs"),
    (f"max({ident(m.latency_field('max'))})", m.latency_field("max"), "Latency max", "µs"),
]


def results_table(ds: dm.DataSourceRef) -> table.Panel:
    query = select(m.RESULT, [(expr, column) for expr, column, _, _ in RESULT_COLUMNS]
                   + [FRAME_ORDER_COLUMN], task_filter(),
                   group_by=[m.TASK_ID, m.SCENARIO, m.FRAME_SIZE, m.LIMITED_BY])
    panel = (table.Panel().title("Results per frame size")
             .description("The answer of each frame size (mean over iterations) and what "
                          "limited it: dut, generator or upper_bound.")
             .datasource(ds).with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
             .transformations(frame_size_order())
             .frame_index(0).show_header(True).align(cm.FieldTextAlignment.AUTO)
             .cell_options(cm.TableAutoCellOptions()).inspect(False)
             .decimals(2).span(24).height(10)
             .override_by_name(m.FRAME_SIZE, [dm.DynamicConfigValue("displayName", "Frame (B)")])
             .override_by_name(m.TASK_ID, [dm.DynamicConfigValue("displayName", "Task")])
             .override_by_name(m.LIMITED_BY, [dm.DynamicConfigValue("displayName", "Limited by")]))
    for _, column, title, unit in RESULT_COLUMNS:
        panel = panel.override_by_name(column, [dm.DynamicConfigValue("displayName", title),
                                                dm.DynamicConfigValue("unit", unit)])
    return panel


def _trial_series(ds: dm.DataSourceRef, title: str, description: str, unit: str,
                  columns: list[tuple[str, str]], group_by: list[str] | None = None,
                  alias: str = SERIES) -> timeseries.Panel:
    query = select(m.TRIAL, columns, task_filter(),
                   group_by=group_by or [m.TASK_ID, m.SCENARIO, m.FRAME_SIZE], time_filter=True)
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias(alias).datasource(ds))
            .unit(unit).draw_style(cm.GraphDrawStyle.LINE).show_points(cm.VisibilityMode.ALWAYS)
            .point_size(6).legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))


def offered_and_received(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _trial_series(
        ds, "Offered and received rate per trial",
        "Each point is one trial: the rate the profile asked for (offered), what the "
        "generator sent and what came back (received).", "pps",
        [(field(m.REQUESTED_RATE_PPS), "offered"), (field(m.TX_RATE_PPS), "sent"),
         (field(m.RX_RATE_PPS), "received")])


def loss_per_trial(ds: dm.DataSourceRef) -> timeseries.Panel:
    return (_trial_series(ds, "Loss per trial", "Frame loss of each trial, in % of sent "
                          "frames; the colour is the verdict.", "percent",
                          [(field(m.LOSS_PCT), "loss")],
                          group_by=[m.TASK_ID, m.SCENARIO, m.FRAME_SIZE, m.VERDICT],
                          alias="$tag_frame_size B $tag_verdict ($tag_task_id $tag_scenario)")
            .draw_style(cm.GraphDrawStyle.POINTS).min(0)
            .override_by_regexp(f".* {m.VERDICT_PASS} .*", [_color(GREEN)])
            .override_by_regexp(f".* {m.VERDICT_FAIL} .*", [_color(RED)]))


def search_interval(ds: dm.DataSourceRef) -> timeseries.Panel:
    """The binary search converging: its bounds, and each offered rate by verdict."""
    bounds = select(m.TRIAL, [(field(m.SEARCH_LOWER_PCT), "lower"),
                              (field(m.SEARCH_UPPER_PCT), "upper")],
                    task_filter(), group_by=[m.TASK_ID, m.SCENARIO, m.FRAME_SIZE], time_filter=True)
    offered = select(m.TRIAL, [(field(m.REQUESTED_RATE_PCT), "offered")], task_filter(),
                     group_by=[m.TASK_ID, m.SCENARIO, m.FRAME_SIZE, m.VERDICT], time_filter=True)
    return (timeseries.Panel().title("Search interval (% of line rate)")
            .description("The interval the search still considers after each trial (lower "
                         "and upper bound) and the rate each trial offered, green when it "
                         "passed, red when it failed.")
            .datasource(ds)
            .with_target(InfluxQL(bounds).ref_id("A").alias(SERIES).datasource(ds))
            .with_target(InfluxQL(offered).ref_id("B").datasource(ds)
                         .alias("$tag_frame_size B $col $tag_verdict ($tag_task_id "
                                "$tag_scenario)"))
            .unit("percent").min(0).max(100).line_interpolation(cm.LineInterpolation.STEP_AFTER)
            .show_points(cm.VisibilityMode.ALWAYS).point_size(6).legend(_legend(as_table=True))
            .tooltip(_tooltip()).span(12).height(9)
            .override_by_query("B", [dm.DynamicConfigValue("custom.drawStyle", "points")])
            .override_by_regexp(f".* {m.VERDICT_PASS} .*", [_color(GREEN)])
            .override_by_regexp(f".* {m.VERDICT_FAIL} .*", [_color(RED)]))


def trial_latency(ds: dm.DataSourceRef, stats: list[str]) -> timeseries.Panel:
    return (_trial_series(ds, "Latency per trial", "One-way latency of the probe stream in "
                          "each trial; logarithmic axis.", "µs",
                          [(field(m.latency_field(stat)), stat) for stat in stats])
            .scale_distribution(_log10()))


def _kpi_series(ds: dm.DataSourceRef, title: str, description: str, unit: str,
                columns: list[tuple[str, str]], sources: str) -> timeseries.Panel:
    query = select(m.KPI, columns, task_filter([sources]),
                   group_by=[m.TASK_ID, m.SOURCE, m.NODE], time_filter=True, interval=True)
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias("$tag_source $col ($tag_task_id)")
                         .datasource(ds))
            .unit(unit).min(0).legend(_legend(as_table=True)).tooltip(_tooltip())
            .span(12).height(9))


def vnf_cpu(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _kpi_series(ds, "CPU per VNF process", "User and system CPU of each VNF "
                       "process, in % of one core (a busy-polling DPDK core shows 100 %).",
                       "percent", [(mean(m.CPU_USER_PCT), "user"),
                                   (mean(m.CPU_SYSTEM_PCT), "system")], NFVI_SOURCES)


def vnf_memory(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _kpi_series(ds, "Memory (RSS) per VNF process", "Resident set size of each "
                       "VNF process.", "kbytes", [(mean(m.RSS_KB), "rss")], NFVI_SOURCES)


def vnf_context_switches(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _kpi_series(ds, "Context switches per VNF process", "Voluntary and involuntary "
                       "context switches per second; a polling core should have almost none.",
                       "cps", [(mean(m.CTX_VOLUNTARY_PER_S), "voluntary"),
                               (mean(m.CTX_NONVOLUNTARY_PER_S), "involuntary")], NFVI_SOURCES)


def node_cores(ds: dm.DataSourceRef) -> timeseries.Panel:
    query = select(m.KPI, [(f"mean(/{m.CORE_UTIL_FIELD_REGEX}/)", "")],
                   task_filter([NODE_SOURCES]), group_by=[m.TASK_ID, m.NODE],
                   time_filter=True, interval=True)
    return (timeseries.Panel().title("CPU utilisation per core")
            .description("Busy time of each core of each node (100 % minus idle and iowait).")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias("$tag_node $col ($tag_task_id)")
                         .datasource(ds))
            .transformations([_transform("renameByRegex", {
                "regex": "(.*)mean_(cpu[0-9]+)_util_pct(.*)", "renamePattern": "$1$2$3"})])
            .unit("percent").min(0).max(100).legend(_legend(as_table=True))
            .tooltip(_tooltip()).span(12).height(9))


def links() -> list[db.DashboardLink]:
    """Every nsb dashboard links to the others, keeping the task and the time range."""
    return [db.DashboardLink("nsb").type(dm.DashboardLinkType.DASHBOARDS).tags(["nsb"])
            .as_dropdown(False).include_vars(True).keep_time(True).target_blank(False)
            .icon("external link").tooltip("").url("")]


def trend(ds: dm.DataSourceRef, column: str, title: str, unit: str,
          description: str) -> timeseries.Panel:
    """One point per run of the selected test cases: a result over time."""
    where = [matches(m.TEST_CASE, TEST_CASE_VAR), matches(m.SCENARIO, SCENARIO_VAR)]
    query = select(m.RESULT, [(field(column), column)], where,
                   group_by=[m.TEST_CASE, m.SCENARIO, m.FRAME_SIZE], time_filter=True)
    alias = "$tag_frame_size B ($tag_test_case $tag_scenario)"
    return (timeseries.Panel().title(title).description(description).datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias(alias).datasource(ds))
            .unit(unit).draw_style(cm.GraphDrawStyle.LINE).show_points(cm.VisibilityMode.ALWAYS)
            .point_size(7).legend(_legend(as_table=True)).tooltip(_tooltip()).span(24)
            .height(9))


def trend_groups(ds: dm.DataSourceRef) -> timeseries.Panel:
    """jumpavg's groups as ``nsb report trend --annotate`` wrote them: a step per change."""
    where = [matches(m.TEST_CASE, TEST_CASE_VAR), matches(m.SCENARIO, SCENARIO_VAR)]
    query = select(m.TREND, [(field(m.GROUP_AVG_PPS), "group average")], where,
                   group_by=[m.TEST_CASE, m.SCENARIO, m.FRAME_SIZE, m.CHAIN], time_filter=True)
    alias = "$tag_frame_size B $tag_chain ($tag_test_case $tag_scenario)"
    return (timeseries.Panel().title("Trend groups (jumpavg, packets/s)")
            .description("The average of the group each run belongs to, as `nsb report "
                         "trend --annotate` last classified the history: a step is where "
                         "a regression or progression began (the annotations).")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A").alias(alias).datasource(ds))
            .unit("pps").draw_style(cm.GraphDrawStyle.LINE)
            .line_interpolation(cm.LineInterpolation.STEP_AFTER)
            .show_points(cm.VisibilityMode.ALWAYS).point_size(5)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(24).height(9))


def trend_changes(ds: dm.DataSourceRef, change: str, color: str,
                  sign: str) -> db.AnnotationQuery:
    """Where ``nsb report trend --annotate`` found a regression (or progression) begin."""
    where = [matches(m.TEST_CASE, TEST_CASE_VAR), matches(m.SCENARIO, SCENARIO_VAR),
             f"{ident(m.CHANGE)} {sign} 0"]
    query = select(m.TREND, [(field(m.TREND_TEXT), m.TREND_TEXT),
                             (field(m.FRAME_SIZE), m.FRAME_SIZE)], where, time_filter=True)
    return (db.AnnotationQuery().name(f"{change}s (jumpavg)").datasource(ds).enable(True)
            .icon_color(color).target(InfluxQLAnnotation(query, m.TREND_TEXT, m.FRAME_SIZE)))


VNF_KPIS = f"{ident(m.KIND)} = 'vnf'"


def generator_ports(ds: dm.DataSourceRef) -> timeseries.Panel:
    """What each generator port sent and received, trial by trial."""
    query = select(m.TRIAL_PORT, [(mean(m.PORT_RATE_PPS), "rate")], task_filter(),
                   group_by=[m.TASK_ID, m.PORT, m.DIRECTION], time_filter=True, interval=True)
    return (timeseries.Panel().title("Generator ports per trial")
            .description("Frames per second each generator port sent (tx) and received "
                         "(rx) in each trial: an uneven split shows one direction losing.")
            .datasource(ds)
            .with_target(InfluxQL(query).ref_id("A")
                         .alias("$tag_port $tag_direction ($tag_task_id)").datasource(ds))
            .unit("pps").min(0).show_points(cm.VisibilityMode.ALWAYS).point_size(5)
            .legend(_legend(as_table=True)).tooltip(_tooltip()).span(12).height(9))


def _vnf_series(ds: dm.DataSourceRef, title: str, description: str, unit: str,
                columns: list[tuple[str, str]]) -> timeseries.Panel:
    """What the VNFs count themselves, one point per sample."""
    return (_kpi_series(ds, title, description, unit, columns, VNF_KPIS)
            .show_points(cm.VisibilityMode.ALWAYS).point_size(5))


def vnf_packet_rates(ds: dm.DataSourceRef) -> timeseries.Panel:
    """The VNFs' own counters (testpmd's ports, PROX's totals) as rates."""
    rates = f"non_negative_derivative(mean(/{m.VNF_PACKET_FIELD_REGEX}/), 1s)"
    return (_vnf_series(ds, "VNF packets per second", "What the VNFs counted themselves "
                        "(testpmd per port, PROX in/forwarded/dropped), per second between "
                        "samples.", "pps", [(rates, "")])
            .transformations([_transform("renameByRegex", {
                "regex": "(.*)non_negative_derivative_(.*)", "renamePattern": "$1$2"})]))


def ovs_pmd_cycles(ds: dm.DataSourceRef) -> timeseries.Panel:
    return _vnf_series(ds, "OVS PMD cycles per packet", "Processing cycles per packet of "
                       "the OVS-DPDK PMD threads (pmd-stats-show, since the switch started).",
                       "none", [(mean(m.OVS_CYCLES_PER_PACKET), "cycles/packet")])


def ovs_flow_cache(ds: dm.DataSourceRef) -> timeseries.Panel:
    columns = [(f"non_negative_derivative(mean({ident(name)}), 1s)", name)
               for name in m.OVS_CACHE_FIELDS]
    return _vnf_series(ds, "OVS flow cache lookups per second", "Where OVS found each "
                       "packet's flow: exact match cache, signature match cache, megaflow "
                       "(dpcls) or an upcall to ofproto (slow path).", "pps", columns)


def platform_table(ds: dm.DataSourceRef) -> table.Panel:
    """Every node of the selected tasks: what it is and what runs on it."""
    columns = [(f"last({ident(name)})", name) for name in m.PLATFORM_FIELDS]
    query = select(m.PLATFORM, columns, [matches(m.TASK_ID, TASK_VAR)], group_by=["*"])
    return (table.Panel().title("Platform")
            .description("Per node of each selected task: host, kernel, OS, CPU model, "
                         "isolated CPUs, the versions found (packages and running VNFs), "
                         "CPUs, sockets, NUMA nodes, memory (GiB), hugepages and NICs.")
            .datasource(ds).with_target(InfluxQL(query).ref_id("A").table().datasource(ds))
            .transformations([_transform("organize", {"excludeByName": {"Time": True}})])
            .show_header(True).cell_options(cm.TableAutoCellOptions()).span(24).height(8))
