"""The generated Grafana dashboards: Grafana's own schema, panels, queries, variables, export.

The schema is Grafana's, as published in the npm package ``@grafana/schema``
(the TypeScript types Grafana generates from its CUE kinds: the dashboard in
raw/dashboard/x/dashboard_types.gen.d.ts, each panel plugin's options and field
config in raw/composable/<panel>/panelcfg/x/*PanelCfg_types.gen.d.ts). The
session fixture turns those types into JSON Schema (draft 7) with
``ts-json-schema-generator``; objects admit no undeclared property. Both npm
packages are installed by `make` under .venv/npm (or NSB_NPM_TOOLS).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from nsb.grafana import measurements as m
from nsb.grafana.dashboards import (
    NFVI_UID,
    RESULTS_UID,
    TRIALS_UID,
    Measures,
    dashboards,
    results,
    to_json,
)
from nsb.grafana.datasource import DEFAULT_UID, InfluxSettings
from nsb.grafana.provisioning import export

UID = "nsb-test-ds"
RAW = Path("node_modules/@grafana/schema/dist/esm/raw")
PANEL_CFG = {  # panel type -> its panelcfg types file
    "barchart": "composable/barchart/panelcfg/x/BarChartPanelCfg_types.gen.d.ts",
    "timeseries": "composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen.d.ts",
    "table": "composable/table/panelcfg/x/TablePanelCfg_types.gen.d.ts",
}
GENERATOR = Path("node_modules/ts-json-schema-generator/dist/ts-json-schema-generator.js")


def npm_tools() -> Path:
    return Path(os.environ.get("NSB_NPM_TOOLS") or Path(sys.prefix) / "npm")


def _generate(tools: Path, types_files: list[Path]) -> list[dict]:
    """JSON Schema of every exported type of each file (the generators run in parallel)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (make installs Debian's nodejs and npm)")
    for needed in (GENERATOR, *types_files):
        if not (tools / needed).is_file():
            pytest.fail(f"{tools / needed} is missing: make installs @grafana/schema and "
                        f"ts-json-schema-generator with npm under {tools}")
    runs = [subprocess.Popen([node, str(GENERATOR), "--path", str(path), "--type", "*",
                              "--no-type-check"], cwd=tools, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for path in types_files]
    schemas = []
    for path, run in zip(types_files, runs, strict=True):
        out, err = run.communicate(timeout=300)
        if run.returncode:
            pytest.fail(f"ts-json-schema-generator failed on {path}: {err[-2000:]}")
        schemas.append(json.loads(out))
    return schemas


def _root(schema: dict, name: str) -> dict:
    return {"$schema": schema["$schema"], "$ref": f"#/definitions/{name}",
            "definitions": schema["definitions"]}


def _version(tools: Path, package: str) -> str:
    manifest = tools / "node_modules" / package / "package.json"
    if not manifest.is_file():
        pytest.fail(f"{manifest} is missing: make installs @grafana/schema and "
                    f"ts-json-schema-generator with npm under {tools}")
    return json.loads(manifest.read_text())["version"]


@pytest.fixture(scope="session")
def grafana_schema(request) -> dict:
    """{"Dashboard": schema, "<panel type>": (Options schema, FieldConfig schema)}.

    Generated once per pair of package versions, then kept in pytest's cache.
    """
    tools = npm_tools()
    schema_version = _version(tools, "@grafana/schema")
    # validate against the Grafana release the Foundation SDK generates for
    sdk = importlib.metadata.version("grafana-foundation-sdk").split("!")[-1]
    assert schema_version.split(".")[:2] == sdk.split(".")[:2], \
        f"@grafana/schema {schema_version} under {tools} is not the SDK's Grafana {sdk}"
    key = (f"nsb/grafana-schema/{schema_version}/"
           f"{_version(tools, 'ts-json-schema-generator')}/{','.join(PANEL_CFG)}")
    generated = request.config.cache.get(key, None)
    if generated is None:
        generated = _generate(tools, [RAW / "dashboard/x/dashboard_types.gen.d.ts",
                                      *(RAW / path for path in PANEL_CFG.values())])
        request.config.cache.set(key, generated)
    dashboard, *panel_cfgs = generated
    schemas = {"Dashboard": _root(dashboard, "Dashboard")}
    for panel_type, cfg in zip(PANEL_CFG, panel_cfgs, strict=True):
        schemas[panel_type] = (_root(cfg, "Options"), _root(cfg, "FieldConfig"))
    assert schemas["Dashboard"]["definitions"]["Panel"]["additionalProperties"] is False
    return schemas


def schema_errors(schemas: dict, board: dict) -> list[str]:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft7Validator(schemas["Dashboard"]).iter_errors(board)]
    for panel in board.get("panels", []):
        options, field_config = schemas[panel["type"]]
        where = f"panel '{panel.get('title')}'"
        errors += [f"{where} options: {e.message}"
                   for e in jsonschema.Draft7Validator(options).iter_errors(panel["options"])]
        custom = panel["fieldConfig"]["defaults"].get("custom", {})
        errors += [f"{where} fieldConfig.custom: {e.message}"
                   for e in jsonschema.Draft7Validator(field_config).iter_errors(custom)]
    return errors


@pytest.fixture(scope="module")
def boards() -> dict[str, dict]:
    return {board["uid"]: board for board in dashboards(UID)}


def targets(board: dict) -> list[tuple[dict, dict]]:
    return [(panel, target) for panel in board["panels"] for target in panel["targets"]]


def panel(board: dict, title_start: str) -> dict:
    found = [p for p in board["panels"] if p["title"].startswith(title_start)]
    assert len(found) == 1, f"{title_start!r} in {[p['title'] for p in board['panels']]}"
    return found[0]


# --- Grafana's schema --------------------------------------------------------------------------

def test_every_dashboard_and_panel_matches_grafanas_schema(grafana_schema, boards):
    assert set(boards) == {RESULTS_UID, TRIALS_UID, NFVI_UID}
    for board in boards.values():
        assert {p["type"] for p in board["panels"]} <= set(PANEL_CFG)
        assert schema_errors(grafana_schema, board) == [], board["uid"]


@pytest.mark.parametrize("breakage", [
    ("panel key Grafana does not know", lambda b: b["panels"][0].update(bogus=1)),
    ("grid position as text", lambda b: b["panels"][0]["gridPos"].update(w="12")),
    ("variable refresh out of range", lambda b: b["templating"]["list"][0].update(refresh=5)),
    ("bar chart option of another panel", lambda b: b["panels"][0]["options"].update(
        drawStyle="line")),
    ("table without its required options", lambda b: panel(b, "Results")["options"].pop(
        "showHeader")),
])
def test_the_schema_check_catches_what_grafana_would_not_take(grafana_schema, breakage):
    board = dashboards(UID)[0]
    breakage[1](board)
    assert schema_errors(grafana_schema, board), breakage[0]


def test_the_sdk_output_needs_the_cleanup_the_schema_asks_for(grafana_schema):
    # the SDK writes interval-variable settings into query variables; Grafana's schema
    # has no such keys, which is why dashboards.to_json drops them
    from grafana_foundation_sdk.cog.encoder import JSONEncoder

    raw = json.loads(JSONEncoder().encode(results(
        _ds(), Measures.of_nsb()).build()))
    assert any("auto" in e for e in schema_errors(grafana_schema, raw))


def _ds():
    from grafana_foundation_sdk.models import dashboard as dm

    return dm.DataSourceRef(type_val="influxdb", uid=UID)


def test_models_read_back_by_the_sdk_are_the_same(boards):
    from grafana_foundation_sdk.models import dashboard as dm

    from nsb.grafana.queries import InfluxQLQuery

    for board in boards.values():
        model = dm.Dashboard.from_json(board)
        assert all(isinstance(t, InfluxQLQuery) for p in model.panels for t in p.targets)
        assert to_json(model) == board


# --- panels, queries, variables ----------------------------------------------------------------

def test_the_panels_of_each_dashboard(boards):
    titles = {uid: [p["title"] for p in board["panels"]] for uid, board in boards.items()}
    assert titles[RESULTS_UID] == [
        "Throughput vs frame size (packets/s)", "Throughput vs frame size (% of line rate)",
        "Latency vs frame size: task $task_id", "Results per frame size"]
    assert titles[TRIALS_UID] == [
        "Offered and received rate per trial", "Search interval (% of line rate)",
        "Loss per trial", "Latency per trial"]
    assert titles[NFVI_UID] == [
        "CPU per VNF process", "Memory (RSS) per VNF process",
        "Context switches per VNF process", "CPU utilisation per core"]
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
    for board in boards.values():
        for p, target in targets(board):
            assert p["datasource"] == {"type": "influxdb", "uid": UID}
            assert target["datasource"] == {"type": "influxdb", "uid": UID}
            assert target["rawQuery"] is True and target["resultFormat"] in ("table",
                                                                              "time_series")
            query = target["query"]
            measurement = re.search(r'FROM "(\w+)"', query).group(1)
            assert measurement in m.MEASUREMENTS, query
            assert '"task_id" =~ /^$task_id$/' in query, query
            assert '"scenario" =~ /^$scenario$/' in query, query
            names = set(QUERY_FIELDS.findall(re.sub(r'AS "[^"]*"', "", query)))
            unknown = {n for n in names if n not in known_fields
                       and not re.fullmatch(r"latency_[a-z0-9.]+_us", n)}
            assert not unknown, f"{query}: {unknown}"
    for p, target in targets(boards[TRIALS_UID]) + targets(boards[NFVI_UID]):
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
        assert f'mean("latency_{stat}_us") AS "{stat}"' in latency
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


def test_throughput_bars_are_ordered_by_frame_size_as_numbers(boards):
    chart = panel(boards[RESULTS_UID], "Throughput vs frame size (packets/s)")
    steps = [(t["id"], t["options"]) for t in chart["transformations"]]
    assert [s[0] for s in steps] == ["convertFieldType", "sortBy", "convertFieldType",
                                     "groupingToMatrix"]
    assert steps[0][1]["conversions"] == [{"destinationType": "number",
                                           "targetField": "frame_size"}]
    assert steps[1][1]["sort"] == [{"desc": False, "field": "frame_size"}]
    assert steps[3][1]["columnField"] == "task_id" and steps[3][1]["rowField"] == "frame_size"
    assert chart["fieldConfig"]["defaults"]["unit"] == "pps"


def test_the_task_and_scenario_variables(boards):
    for board in boards.values():
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


def test_latency_panels_follow_the_percentiles_nsb_measures():
    from nsb.vnfs.latency_probe import PERCENTILES

    assert Measures.of_nsb().latency_percentiles == tuple(f"p{p:g}" for p in PERCENTILES)
    board = dashboards(UID, Measures(latency_percentiles=("p50", "p95")))[0]
    query = panel(board, "Latency vs frame size")["targets"][0]["query"]
    assert '"latency_p95_us"' in query and "p99" not in query
    assert [b["uid"] for b in dashboards(UID, Measures(nfvi=False))] == [RESULTS_UID, TRIALS_UID]


# --- data source and export --------------------------------------------------------------------

def test_data_source_models_for_influxdb_1_and_2():
    v1 = InfluxSettings(url="http://influx:8086", database="lab", user="nsb", password="pw1")
    model = v1.api_model()
    assert (model["type"], model["access"], model["url"]) == ("influxdb", "proxy",
                                                              "http://influx:8086")
    assert model["database"] == model["jsonData"]["dbName"] == "lab"
    assert model["jsonData"]["version"] == "InfluxQL" and model["user"] == "nsb"
    assert model["secureJsonData"] == {"password": "pw1"}
    v2 = InfluxSettings(bucket="nsb", token="tok2")
    model = v2.api_model()
    assert model["jsonData"]["httpHeaderName1"] == "Authorization"
    assert model["secureJsonData"] == {"httpHeaderValue1": "Token tok2"}
    assert "tok2" not in repr(v2) and "pw1" not in repr(v1)
    assert "secureJsonData" not in InfluxSettings().api_model()  # an update keeps the secret
    no_auth = InfluxSettings(bucket="nsb/autogen").api_model()  # InfluxDB 1.8, v2 API
    assert no_auth["jsonData"]["dbName"] == "nsb" and "httpHeaderName1" not in no_auth["jsonData"]
    with pytest.raises(Exception, match="not both"):
        InfluxSettings(database="a", bucket="b")


def test_export_writes_provisioning_files(tmp_path):
    influx = InfluxSettings(url="http://influxdb:8086", bucket="nsb", token="never-written")
    written = export(tmp_path / "prov", influx, grafana_path="/etc/grafana/provisioning")
    root = tmp_path / "prov"
    assert sorted(p.relative_to(root).as_posix() for p in written) == [
        "dashboards/json/nsb-nfvi.json", "dashboards/json/nsb-results.json",
        "dashboards/json/nsb-trials.json", "dashboards/nsb.yaml", "datasources/nsb.yaml"]
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
    export(tmp_path, InfluxSettings(database="nsb"))
    providers = yaml.safe_load((tmp_path / "dashboards/nsb.yaml").read_text())
    assert providers["providers"][0]["options"]["path"] == str(tmp_path / "dashboards/json")
    source = yaml.safe_load((tmp_path / "datasources/nsb.yaml").read_text())["datasources"][0]
    assert "secureJsonData" not in source and source["database"] == "nsb"
