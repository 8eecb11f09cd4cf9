"""Grafana dashboards of what nsb measures, generated with grafana-foundation-sdk.

Five dashboards, all but the trend filtered by the ``task_id`` (several tasks side
by side) and ``scenario`` template variables, the trend by ``test_case`` and
``scenario``, all linked to each other:

- ``nsb-results``: throughput vs frame size (pps and % of line rate), latency
  statistics vs frame size, the results table, the stateful answers (connections a
  second, sessions, the DUT's own count);
- ``nsb-trials``: the trial timeline: offered, sent and received rate, loss,
  the search interval, latency per trial; a stateful trial's connection rate asked
  and established, its sessions asked and held by the DUT, its connections lost by
  reason;
- ``nsb-nfvi``: NFVi KPIs: CPU, memory and context switches per VNF process,
  CPU utilisation per core of each node;
- ``nsb-trend``: the results of every run of the selected test cases over time
  (NDR, % of line rate, p99 latency per frame size, a stateful answer's connections a
  second and sessions) and jumpavg's groups, with the
  regressions and progressions ``nsb report trend --annotate`` found as annotations;
- ``nsb-soak``: long trials as they run: a soak's loss, rates and latency per
  interval, PLRsearch's estimate and spread after each trial.

The latency panels follow the percentiles nsb's generators compute
(``Measures.of_nsb()``), so a new percentile shows up without editing any JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana import (
    chain_panels,
    change_panels,
    hop_panels,
    panels,
    session_panels,
    soak_panels,
)
from nsb.grafana.queries import DATASOURCE_TYPE, matches, tag_values
from nsb.outputs.influxdb import names as m

RESULTS_UID = "nsb-results"
TRIALS_UID = "nsb-trials"
NFVI_UID = "nsb-nfvi"
TREND_UID = "nsb-trend"
SOAK_UID = "nsb-soak"
TAG = "nsb"
GRID_COLUMNS = 24


@dataclass(frozen=True)
class Measures:
    """What the panels show: latency statistics and whether there are NFVi KPIs."""

    latency_percentiles: tuple[str, ...] = ("p50", "p90", "p99", "p99.9")
    nfvi: bool = True

    @classmethod
    def of_nsb(cls) -> Measures:
        """The percentiles nsb's latency probes report (p50, p90, p99, p99.9)."""
        from nsb.trial import PERCENTILES

        return cls(latency_percentiles=tuple(f"p{p:g}" for p in PERCENTILES))

    @property
    def latency_stats(self) -> list[str]:
        return ["min", "avg", *self.latency_percentiles, "max"]


def _variables(ds: dm.DataSourceRef) -> list[db.QueryVariable]:
    task = (db.QueryVariable(panels.TASK_VAR).label("Task")
            .description("nsb task ids (they start with the UTC start time: newest "
                         "first); pick several to compare them")
            .query(tag_values(m.TASK, m.TASK_ID)).datasource(ds).multi(True)
            .include_all(False).refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(dm.VariableSort.ALPHABETICAL_DESC))
    scenario = (db.QueryVariable(panels.SCENARIO_VAR).label("Scenario")
                .description("scenarios of the tasks; several (or all) to compare runs of "
                             "differently named scenarios")
                .query(tag_values(m.TRIAL, m.SCENARIO, [matches(m.TASK_ID, panels.TASK_VAR)]))
                .datasource(ds).multi(True).include_all(True)
                .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(dm.VariableSort.ALPHABETICAL_ASC))
    return [task, scenario]


def _trend_variables(ds: dm.DataSourceRef) -> list[db.QueryVariable]:
    test_case = (db.QueryVariable(panels.TEST_CASE_VAR).label("Test case")
                 .description("task files (without .yaml) whose runs to follow")
                 .query(tag_values(m.RESULT, m.TEST_CASE)).datasource(ds).multi(True)
                 .include_all(False).refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
                 .sort(dm.VariableSort.ALPHABETICAL_ASC))
    scenario = (db.QueryVariable(panels.SCENARIO_VAR).label("Scenario")
                .description("scenarios of the test cases")
                .query(tag_values(m.RESULT, m.SCENARIO,
                                  [matches(m.TEST_CASE, panels.TEST_CASE_VAR)]))
                .datasource(ds).multi(True).include_all(True)
                .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(dm.VariableSort.ALPHABETICAL_ASC))
    return [test_case, scenario]


def _dashboard(uid: str, title: str, description: str, ds: dm.DataSourceRef,
               refresh: str | None, variables: list | None = None,
               since: str = "now-24h") -> db.Dashboard:
    board = (db.Dashboard(title).uid(uid).description(description).tags([TAG])
             .editable().time(since, "now").timezone("browser")
             .tooltip(dm.DashboardCursorSync.CROSSHAIR).links(panels.links())
             .variables(variables if variables is not None else _variables(ds)))
    return board.refresh(refresh) if refresh else board


def _with_panels(board: db.Dashboard, panel_builders: list) -> db.Dashboard:
    """Left to right, a new row when a panel would pass the 24 columns (the SDK's own
    layout puts a wide panel beside a narrow one, off the grid)."""
    x = y = row_height = 0
    for panel in panel_builders:
        grid = panel.build().grid_pos
        if x + grid.w > GRID_COLUMNS:
            x, y, row_height = 0, y + row_height, 0
        panel.grid_pos(dm.GridPos(h=grid.h, w=grid.w, x=x, y=y))
        board = board.with_panel(panel)
        x, row_height = x + grid.w, max(row_height, grid.h)
    return board


def results(ds: dm.DataSourceRef, measures: Measures) -> db.Dashboard:
    board = _dashboard(RESULTS_UID, "nsb: results", "RFC 2544 answers per frame size of the "
                       "selected tasks, whatever the time range.", ds, None)
    return _with_panels(board, [
        panels.throughput_by_frame_size(
            ds, m.THROUGHPUT_PPS, "Throughput vs frame size (packets/s)", "pps", "packets/s",
            "The highest rate with no more loss than tolerated, per frame size; one bar per "
            "selected task (mean over iterations)."),
        panels.throughput_by_frame_size(
            ds, m.LINE_RATE_PCT, "Throughput vs frame size (% of line rate)", "percent",
            "% of line rate", "The same answer in % of the line rate of the ports under test."),
        panels.latency_by_frame_size(ds, measures.latency_stats),
        panels.results_table(ds), session_panels.stateful_answers(ds),
        change_panels.change_answers(ds),
        panels.platform_table(ds), chain_panels.throughput_per_chain(ds)])


def trials(ds: dm.DataSourceRef, measures: Measures) -> db.Dashboard:
    board = _dashboard(TRIALS_UID, "nsb: trial timeline", "Every trial of the selected tasks "
                       "as it ran: live during a run (auto-refresh), or afterwards with the "
                       "task's time range.", ds, "10s")
    return _with_panels(board, [
        panels.offered_and_received(ds), panels.search_interval(ds), panels.loss_per_trial(ds),
        panels.trial_latency(ds, ["avg", *measures.latency_percentiles]),
        panels.generator_ports(ds), hop_panels.lost_per_hop(ds),
        hop_panels.lost_per_trial(ds), chain_panels.loss_per_chain(ds),
        session_panels.connections_per_trial(ds), session_panels.sessions_per_trial(ds),
        session_panels.failed_per_trial(ds)])


def nfvi(ds: dm.DataSourceRef, measures: Measures) -> db.Dashboard:
    board = _dashboard(NFVI_UID, "nsb: NFVi and VNF KPIs", "CPU, memory and context "
                       "switches of the VNF processes, the CPU cores of each node, and what "
                       "the VNFs count themselves (packets, OVS PMD cycles and flow cache) "
                       "while traffic ran.", ds, "10s")
    return _with_panels(board, [panels.vnf_cpu(ds), panels.vnf_memory(ds),
                                panels.vnf_context_switches(ds), panels.node_cores(ds),
                                panels.vnf_packet_rates(ds), panels.ovs_pmd_cycles(ds),
                                panels.ovs_flow_cache(ds)])


def trend(ds: dm.DataSourceRef, measures: Measures) -> db.Dashboard:
    board = _dashboard(TREND_UID, "nsb: trend", "Every run of the selected test cases over "
                       "time: one point per run and frame size.", ds, None,
                       _trend_variables(ds), since="now-90d")
    p99 = m.latency_field("p99") if "p99" in measures.latency_percentiles else \
        m.latency_field("avg")
    for change, color, sign in (("regression", "red", "<"), ("progression", "green", ">")):
        board = board.annotation(panels.trend_changes(ds, change, color, sign))
    return _with_panels(board, [
        panels.trend(ds, m.THROUGHPUT_PPS, "NDR per run (packets/s)", "pps",
                     "The throughput each run found, per frame size."),
        panels.trend_groups(ds),
        panels.trend(ds, m.LINE_RATE_PCT, "NDR per run (% of line rate)", "percent",
                     "The same in % of the line rate of the ports under test."),
        panels.trend(ds, p99, "Latency at NDR per run (us)", "µs",
                     "The latency percentile measured at each run's answer."),
        session_panels.trend(ds, m.CPS, "Connections per second per run", "cps",
                             "A cps answer of each run: the connection rate it sustained."),
        session_panels.trend(ds, m.SESSIONS, "Concurrent sessions per run", "none",
                             "A concurrent_sessions answer of each run: the sessions held.")])


def soak(ds: dm.DataSourceRef, measures: Measures) -> db.Dashboard:
    board = _dashboard(SOAK_UID, "nsb: soak and PLRsearch", "Long trials of the selected "
                       "tasks: loss, rates and latency per interval of a soak, live while it "
                       "runs (auto-refresh); PLRsearch's estimate after each trial.", ds, "10s",
                       since="now-6h")
    return _with_panels(board, [
        soak_panels.loss_per_interval(ds), soak_panels.rates_per_interval(ds),
        soak_panels.latency_per_interval(ds, measures.latency_stats),
        soak_panels.plr_estimate(ds)])


_INTERVAL_ONLY = ("auto", "auto_min", "auto_count")


def to_json(board: db.Dashboard | dm.Dashboard) -> dict:
    """The dashboard JSON model, as Grafana stores it, of a builder or a built model."""
    built = board.build() if isinstance(board, db.Dashboard) else board
    model = json.loads(JSONEncoder(sort_keys=True).encode(built))
    # the SDK writes the interval-variable settings into every variable; Grafana's
    # schema has them on none, and they mean nothing on a query variable
    for variable in model.get("templating", {}).get("list", []):
        if variable.get("type") != "interval":
            for key in _INTERVAL_ONLY:
                variable.pop(key, None)
    return model


def dashboards(datasource_uid: str, measures: Measures | None = None) -> list[dict]:
    """The JSON models of the nsb dashboards, querying the InfluxDB data source given."""
    measures = measures or Measures.of_nsb()
    ds = dm.DataSourceRef(type_val=DATASOURCE_TYPE, uid=datasource_uid)
    boards = [results(ds, measures), trials(ds, measures)]
    if measures.nfvi:
        boards.append(nfvi(ds, measures))
    boards += [trend(ds, measures), soak(ds, measures)]
    return [to_json(board) for board in boards]
