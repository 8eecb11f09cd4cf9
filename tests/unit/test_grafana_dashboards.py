"""The generated Grafana dashboards: panels, queries, variables, export.

Their validation against Grafana's published schema needs node and npm and lives
in tests/functional/test_grafana_schema.py.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from nsb.grafana.dashboards import (
    NFVI_UID,
    RESULTS_UID,
    SOAK_UID,
    TREND_UID,
    TRIALS_UID,
    Measures,
    dashboards,
    to_json,
)
from nsb.grafana.datasource import DEFAULT_UID, InfluxDataSource
from nsb.grafana.provisioning import export
from nsb.outputs.influxdb import names as m

UID = "nsb-test-ds"


@pytest.fixture(scope="module")
def boards() -> dict[str, dict]:
    return {board["uid"]: board for board in dashboards(UID)}


def targets(board: dict) -> list[tuple[dict, dict]]:
    return [(panel, target) for panel in board["panels"] for target in panel["targets"]]


def panel(board: dict, title_start: str) -> dict:
    found = [p for p in board["panels"] if p["title"].startswith(title_start)]
    assert len(found) == 1, f"{title_start!r} in {[p['title'] for p in board['panels']]}"
    return found[0]


def _ds():
    from grafana_foundation_sdk.models import dashboard as dm

    return dm.DataSourceRef(type_val="influxdb", uid=UID)


def test_models_read_back_by_the_sdk_are_the_same(boards):
    from grafana_foundation_sdk.models import dashboard as dm

    from nsb.grafana.queries import InfluxQLQuery

    for board in boards.values():
        model = dm.Dashboard.from_json(board)
        assert all(isinstance(t, InfluxQLQuery) for p in model.panels for t in p.targets)
        # the SDK's AnnotationTarget is Grafana's built-in annotation target (limit, tags,
        # type: "TODO.. this should just be a normal query target"): an InfluxQL one reads
        # back without its query, so the trend's two annotations are compared apart
        read_back, sent = to_json(model), dict(board)
        read_annotations = read_back.pop("annotations", None)
        sent_annotations = sent.pop("annotations", None)
        assert read_back == sent
        names = [(a["name"], a["datasource"]) for a in (sent_annotations or {}).get("list", [])]
        assert [(a["name"], a["datasource"]) for a in (read_annotations or {}).get(
            "list", [])] == names


# --- panels, queries, variables ----------------------------------------------------------------

def test_the_panels_of_each_dashboard(boards):
    titles = {uid: [p["title"] for p in board["panels"]] for uid, board in boards.items()}
    assert titles[RESULTS_UID] == [
        "Throughput vs frame size (packets/s)", "Throughput vs frame size (% of line rate)",
        "Latency vs frame size: task $task_id", "Results per frame size",
        "Stateful answers (connections and sessions)",
        "Answers under change (reset, overload, neighbour, MAC)", "Platform",
        "Throughput per service chain (packets/s)"]
    assert titles[TRIALS_UID] == [
        "Offered and received rate per trial", "Search interval (% of line rate)",
        "Loss per trial", "Latency per trial", "Generator ports per trial",
        "Frames lost per hop", "Frames lost per hop, trial by trial",
        "Loss per service chain, trial by trial",
        "Connections per second per trial: asked vs established",
        "Sessions per trial: asked vs held by the DUT", "Connections lost per trial, by reason"]
    assert titles[NFVI_UID] == [
        "CPU per VNF process", "Memory (RSS) per VNF process",
        "Context switches per VNF process", "CPU utilisation per core",
        "VNF packets per second", "OVS PMD cycles per packet",
        "OVS flow cache lookups per second"]
    assert titles[SOAK_UID] == [
        "Soak: loss per interval", "Soak: offered, sent and received rate per interval",
        "Soak: latency per interval", "PLRsearch: critical load after each trial"]
    for board in boards.values():
        cells = set()
        for p in board["panels"]:
            grid = p["gridPos"]
            assert grid["x"] + grid["w"] <= 24
            for x in range(grid["x"], grid["x"] + grid["w"]):
                for y in range(grid["y"], grid["y"] + grid["h"]):
                    assert (x, y) not in cells, f"{p['title']} overlaps another panel"
                    cells.add((x, y))


QUERY_FIELDS = re.compile(r'"([a-z0-9_.]+)"')


def test_every_query_is_influxql_on_the_nsb_measurements_for_the_selected_task(boards):
    known_fields = {value for name, value in vars(m).items()
                    if name.isupper() and isinstance(value, str)}
    known_fields |= {value for name, values in vars(m).items()
                     if name.isupper() and isinstance(values, tuple) for value in values}
    for board in boards.values():
        for p, target in targets(board):
            assert p["datasource"] == {"type": "influxdb", "uid": UID}
            assert target["datasource"] == {"type": "influxdb", "uid": UID}
            assert target["rawQuery"] is True and target["resultFormat"] in ("table",
                                                                              "time_series")
            query = target["query"]
            measurement = re.search(r'FROM "(\w+)"', query).group(1)
            assert measurement in m.ALL_MEASUREMENTS, query
            selector = "test_case" if board["uid"] == TREND_UID else "task_id"
            assert f'"{selector}" =~ /^${selector}$/' in query, query
            if measurement != "nsb_platform":  # a node's facts belong to no scenario
                assert '"scenario" =~ /^$scenario$/' in query, query
            names = set(QUERY_FIELDS.findall(re.sub(r'AS "[^"]*"', "", query)))
            unknown = {n for n in names if n not in known_fields
                       and not re.fullmatch(r"latency_[a-z0-9_]+_us", n)}
            assert not unknown, f"{query}: {unknown}"
    for p, target in targets(boards[TRIALS_UID]) + targets(boards[NFVI_UID]) + \
            targets(boards[TREND_UID]) + targets(boards[SOAK_UID]):
        assert "$timeFilter" in target["query"], p["title"]
    for p, target in targets(boards[RESULTS_UID]):  # results whatever the time range
        assert "$timeFilter" not in target["query"], p["title"]


def test_what_each_panel_queries(boards):
    def query(uid, title):
        return " ".join(t["query"] for t in panel(boards[uid], title)["targets"])

    pps = query(RESULTS_UID, "Throughput vs frame size (packets/s)")
    assert 'mean("throughput_pps")' in pps and 'FROM "nsb_result"' in pps
    assert 'GROUP BY "frame_size", "task_id"' in pps
    assert 'mean("line_rate_pct")' in query(RESULTS_UID, "Throughput vs frame size (%")
    latency = query(RESULTS_UID, "Latency vs frame size")
    for stat in ("min", "avg", "p50", "p90", "p99", "p99.9", "max"):
        assert f'mean("latency_{stat.replace(".", "_")}_us") AS "{stat}"' in latency
    offered = query(TRIALS_UID, "Offered and received")
    assert all(f'"{f}"' in offered for f in (m.REQUESTED_RATE_PPS, m.TX_RATE_PPS,
                                              m.RX_RATE_PPS))
    search = query(TRIALS_UID, "Search interval")
    assert all(f'"{f}"' in search for f in (m.SEARCH_LOWER_PCT, m.SEARCH_UPPER_PCT,
                                             m.REQUESTED_RATE_PCT, m.VERDICT))
    assert f'"{m.LOSS_PCT}"' in query(TRIALS_UID, "Loss per trial")
    cpu = query(NFVI_UID, "CPU per VNF")
    assert 'mean("cpu_user_pct")' in cpu and 'mean("cpu_system_pct")' in cpu
    assert '"source" =~ /^nfvi:/' in cpu and 'FROM "nsb_kpi"' in cpu
    assert 'GROUP BY time($__interval), "task_id", "source", "node"' in cpu
    assert 'mean("rss_kb")' in query(NFVI_UID, "Memory")
    cores = query(NFVI_UID, "CPU utilisation per core")
    assert "mean(/^cpu[0-9]+_util_pct$/)" in cores and '"source" =~ /^node:/' in cores


def test_stateful_panels_query_the_sessions_of_trials_and_answers(boards):
    """Per stateful trial the rate asked, offered, established; the sessions asked and
    held by the DUT; every failed_<reason> field by its regex; per answer its own
    numbers, only from the results that have them."""
    def query(uid, title):
        return " ".join(t["query"] for t in panel(boards[uid], title)["targets"])

    cps = query(TRIALS_UID, "Connections per second per trial")
    assert 'FROM "nsb_trial_sessions"' in cps
    assert all(f'"{f}" AS "{alias}"' in cps for f, alias in (
        (m.CPS_ASKED, "asked"), (m.OFFERED_CPS, "offered"), (m.CPS, "established")))
    assert cps.endswith('GROUP BY "task_id", "scenario", "program"')
    held = query(TRIALS_UID, "Sessions per trial")
    assert f'"{m.DUT_SESSIONS}" AS "held by the DUT"' in held and f'"{m.INTENDED}"' in held
    failed = query(TRIALS_UID, "Connections lost per trial")
    assert "SELECT /^failed_/, " in failed and f'"{m.NEVER_ATTEMPTED}"' in failed
    answers = query(RESULTS_UID, "Stateful answers")
    assert 'FROM "nsb_result"' in answers and '"cps" >= 0' in answers
    assert 'last("stateful_kind") AS "stateful_kind"' in answers
    assert 'mean("dut_sessions")' in answers and 'max("generator_ceiling_cps")' in answers
    assert "$timeFilter" not in answers  # answers whatever the time range


def test_soak_panels_query_the_intervals_and_plrsearchs_estimates(boards):
    """A soak's intervals and PLRsearch's estimates, live (auto-refresh), per series of
    task, scenario and frame size; the estimate drawn with its spread."""
    board = boards[SOAK_UID]
    assert board["refresh"] == "10s"
    loss = " ".join(t["query"] for t in panel(board, "Soak: loss")["targets"])
    assert 'FROM "nsb_soak"' in loss and f'"{m.LOSS_PCT}"' in loss
    assert 'GROUP BY "task_id", "scenario", "frame_size"' in loss
    latency = " ".join(t["query"] for t in panel(board, "Soak: latency")["targets"])
    assert '"latency_p99_9_us" AS "p99.9"' in latency and '"latency_max_us"' in latency
    plr = " ".join(t["query"] for t in panel(board, "PLRsearch")["targets"])
    assert 'FROM "nsb_plr"' in plr
    assert '"estimate_pps" - "stdev_pps" AS "estimate - stdev"' in plr
    assert '"estimate_pps" + "stdev_pps" AS "estimate + stdev"' in plr


def test_throughput_bars_are_ordered_by_mean_frame_size(boards):
    """InfluxDB returns tag values sorted as text (1024 before 64) and an IMIX row's
    frame_size is a label: rows are sorted by the mean frame size field instead."""
    chart = panel(boards[RESULTS_UID], "Throughput vs frame size (packets/s)")
    assert 'mean("frame_bytes") AS "frame_bytes"' in chart["targets"][0]["query"]
    steps = [(t["id"], t["options"]) for t in chart["transformations"]]
    assert [s[0] for s in steps] == ["sortBy", "organize", "groupingToMatrix"]
    assert steps[0][1]["sort"] == [{"desc": False, "field": "frame_bytes"}]
    assert steps[1][1]["excludeByName"] == {"Time": True, "frame_bytes": True}
    assert steps[2][1]["columnField"] == "task_id" and steps[2][1]["rowField"] == "frame_size"
    assert chart["fieldConfig"]["defaults"]["unit"] == "pps"
    for title in ("Latency vs frame size", "Results per frame size"):
        shown = panel(boards[RESULTS_UID], title)
        assert 'AS "frame_bytes"' in shown["targets"][0]["query"]
        assert shown["transformations"][0]["options"]["sort"][0]["field"] == "frame_bytes"


def test_the_task_and_scenario_variables(boards):
    for board in (b for uid, b in boards.items() if uid != TREND_UID):
        task, scenario = board["templating"]["list"]
        assert task["name"] == "task_id" and task["type"] == "query"
        assert task["query"] == 'SHOW TAG VALUES FROM "nsb_task" WITH KEY = "task_id"'
        assert task["datasource"] == {"type": "influxdb", "uid": UID}
        assert task["multi"] is True and task["includeAll"] is False
        assert task["refresh"] == 2  # on time range change: new tasks show up
        assert scenario["name"] == "scenario"
        assert scenario["query"] == ('SHOW TAG VALUES FROM "nsb_trial" WITH KEY = "scenario" '
                                     'WHERE "task_id" =~ /^$task_id$/')
        assert board["links"][0]["includeVars"] is True and board["links"][0]["tags"] == ["nsb"]
        assert board["tags"] == ["nsb"] and len(board["uid"]) <= 40
    assert panel(boards[RESULTS_UID], "Latency vs frame size")["repeat"] == "task_id"


def test_the_trend_follows_test_cases_over_runs(boards):
    trend = boards[TREND_UID]
    test_case, scenario = trend["templating"]["list"]
    assert test_case["query"] == 'SHOW TAG VALUES FROM "nsb_result" WITH KEY = "test_case"'
    assert test_case["multi"] is True
    assert scenario["includeAll"] is True and '"test_case" =~ /^$test_case$/' in scenario["query"]
    assert trend["time"]["from"] == "now-90d"
    queries = [target["query"] for _, target in targets(trend)]
    assert [re.search(r'SELECT "(\S+)"', q).group(1) for q in queries] == [
        "throughput_pps", "group_avg_pps", "line_rate_pct", "latency_p99_us", "cps",
        "sessions"]
    assert all(q.endswith('GROUP BY "test_case", "scenario", "frame_size"')
               for q in queries[:4] if '"nsb_result"' in q)
    # a stateful answer is no frame size's: one series per test case and scenario
    assert all(q.endswith('GROUP BY "test_case", "scenario"') for q in queries[4:])
    assert queries[1].endswith('GROUP BY "test_case", "scenario", "frame_size", "chain"')
    marks = trend["annotations"]["list"]
    assert [a["target"]["query"].split(" AND ")[-2:] for a in marks] == [
        ['"change" < 0', "$timeFilter"], ['"change" > 0', "$timeFilter"]]


def test_latency_panels_follow_the_percentiles_nsb_measures():
    from nsb.trial import PERCENTILES

    assert Measures.of_nsb().latency_percentiles == tuple(f"p{p:g}" for p in PERCENTILES)
    board = dashboards(UID, Measures(latency_percentiles=("p50", "p95")))[0]
    query = panel(board, "Latency vs frame size")["targets"][0]["query"]
    assert '"latency_p95_us"' in query and "p99" not in query
    assert [b["uid"] for b in dashboards(UID, Measures(nfvi=False))] == [RESULTS_UID, TRIALS_UID,
                                                                        TREND_UID, SOAK_UID]


# --- data source and export --------------------------------------------------------------------

def test_data_source_models_for_influxdb_1_and_2():
    v1 = InfluxDataSource(url="http://influx:8086", database="lab", username="nsb", password="pw1")
    model = v1.api_model()
    assert (model["type"], model["access"], model["url"]) == ("influxdb", "proxy",
                                                              "http://influx:8086")
    assert model["database"] == model["jsonData"]["dbName"] == "lab"
    assert model["jsonData"]["version"] == "InfluxQL" and model["user"] == "nsb"
    assert model["secureJsonData"] == {"password": "pw1"}
    v2 = InfluxDataSource(bucket="nsb", token="tok2")
    model = v2.api_model()
    assert model["jsonData"]["httpHeaderName1"] == "Authorization"
    assert model["secureJsonData"] == {"httpHeaderValue1": "Token tok2"}
    assert "tok2" not in repr(v2) and "pw1" not in repr(v1)
    assert "secureJsonData" not in InfluxDataSource().api_model()  # an update keeps the secret
    no_auth = InfluxDataSource(bucket="nsb/autogen").api_model()  # InfluxDB 1.8, v2 API
    assert no_auth["jsonData"]["dbName"] == "nsb" and "httpHeaderName1" not in no_auth["jsonData"]
    with pytest.raises(Exception, match="not both"):
        InfluxDataSource(database="a", bucket="b")


def test_export_writes_provisioning_files(tmp_path):
    influx = InfluxDataSource(url="http://influxdb:8086", bucket="nsb", token="never-written")
    written = export(tmp_path / "prov", influx, grafana_path="/etc/grafana/provisioning")
    root = tmp_path / "prov"
    assert sorted(p.relative_to(root).as_posix() for p in written) == [
        "dashboards/json/nsb-nfvi.json", "dashboards/json/nsb-results.json",
        "dashboards/json/nsb-soak.json", "dashboards/json/nsb-trend.json",
        "dashboards/json/nsb-trials.json",
        "dashboards/nsb.yaml", "datasources/nsb.yaml"]
    sources = yaml.safe_load((root / "datasources/nsb.yaml").read_text())
    assert sources["apiVersion"] == 1 and len(sources["datasources"]) == 1
    source = sources["datasources"][0]
    assert (source["name"], source["uid"], source["type"]) == ("nsb-influxdb", DEFAULT_UID,
                                                               "influxdb")
    assert source["url"] == "http://influxdb:8086" and source["jsonData"]["dbName"] == "nsb"
    assert source["secureJsonData"] == {"httpHeaderValue1": "Token ${NSB_INFLUXDB_TOKEN}"}
    providers = yaml.safe_load((root / "dashboards/nsb.yaml").read_text())
    assert providers["apiVersion"] == 1
    assert providers["providers"][0]["type"] == "file"
    assert providers["providers"][0]["options"]["path"] == \
        "/etc/grafana/provisioning/dashboards/json"
    for board in dashboards(DEFAULT_UID):
        assert json.loads((root / f"dashboards/json/{board['uid']}.json").read_text()) == board
    assert not any("never-written" in p.read_text() for p in written)


def test_export_defaults_the_provider_path_to_the_directory(tmp_path):
    export(tmp_path, InfluxDataSource(database="nsb"))
    providers = yaml.safe_load((tmp_path / "dashboards/nsb.yaml").read_text())
    assert providers["providers"][0]["options"]["path"] == str(tmp_path / "dashboards/json")
    source = yaml.safe_load((tmp_path / "datasources/nsb.yaml").read_text())["datasources"][0]
    assert "secureJsonData" not in source and source["database"] == "nsb"


def test_the_chain_panels_read_each_chains_own_points(boards):
    by_chain = panel(boards[RESULTS_UID], "Throughput per service chain")
    (target,) = by_chain["targets"]
    assert 'FROM "nsb_result_chain"' in target["query"] and '"chain"' in target["query"]
    per_trial = panel(boards[TRIALS_UID], "Loss per service chain")
    (target,) = per_trial["targets"]
    assert 'FROM "nsb_trial_chain"' in target["query"] and "$timeFilter" in target["query"]
    assert target["alias"] == "chain $tag_chain ($tag_frame_size B)"


def test_the_answers_under_change_are_read_where_the_output_writes_them():
    from nsb.grafana.change_panels import CHANGE_COLUMNS
    from nsb.outputs.influxdb.points import numeric_fields

    written = numeric_fields({"reset": {"reset_time_s": 0.4, "blocked_time_s": 0.4},
                              "overload": {"overload_recovery_s": 0.5},
                              "neighbour": {"reported_drop_pct": 20.0},
                              "mac_learning": {"mac_capacity": 500,
                                               "learning_rate_pps": 5e4}})
    assert {name for name, _, _, _ in CHANGE_COLUMNS} == set(written)
