"""The generated Grafana dashboards against Grafana's own schema.

The schema is Grafana's, as published in the npm package ``@grafana/schema``
(the TypeScript types Grafana generates from its CUE kinds: the dashboard in
raw/dashboard/x/dashboard_types.gen.d.ts, each panel plugin's options and field
config in raw/composable/<panel>/panelcfg/x/*PanelCfg_types.gen.d.ts). The
session fixture turns those types into JSON Schema (draft 7) with
``ts-json-schema-generator``; objects admit no undeclared property. Both npm
packages are installed by `make` under .venv/npm (or NSB_NPM_TOOLS); this needs
node, so it is a functional test (the unit tests run without npm).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from nsb.grafana.dashboards import (
    NFVI_UID,
    RESULTS_UID,
    SOAK_UID,
    TREND_UID,
    TRIALS_UID,
    Measures,
    dashboards,
    results,
)
from tests.unit.test_grafana_dashboards import UID, _ds, panel

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


def _annotation_targets_as_queries(board: dict) -> tuple[dict, list[str]]:
    """The board with the targets of data-source annotations taken out, and what is
    wrong with those targets.

    Grafana's schema types an annotation's target as the built-in "grafana" data
    source's (limit, matchAny, tags, type), with the note "TODO.. this should just be a
    normal query target": an InfluxDB annotation saves its data source's query there
    (query, rawQuery, textColumn...), as Grafana's InfluxDB annotation editor does. So
    such a target is held to what the schema asks of a panel's targets (a query of its
    data source: an object) and the rest of the annotation to the schema."""
    board = json.loads(json.dumps(board))
    errors = []
    for index, anno in enumerate((board.get("annotations") or {}).get("list") or []):
        if (anno.get("datasource") or {}).get("type") in (None, "grafana", "datasource"):
            continue
        target = anno.pop("target", None)
        if not isinstance(target, dict) or not isinstance(target.get("refId"), str):
            errors.append(f"annotations/list/{index}/target: not a query of its data source")
    return board, errors


def schema_errors(schemas: dict, board: dict) -> list[str]:
    board, errors = _annotation_targets_as_queries(board)
    errors += [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
               for e in jsonschema.Draft7Validator(schemas["Dashboard"]).iter_errors(board)]
    for item in board.get("panels", []):
        options, field_config = schemas[item["type"]]
        where = f"panel '{item.get('title')}'"
        errors += [f"{where} options: {e.message}"
                   for e in jsonschema.Draft7Validator(options).iter_errors(item["options"])]
        custom = item["fieldConfig"]["defaults"].get("custom", {})
        errors += [f"{where} fieldConfig.custom: {e.message}"
                   for e in jsonschema.Draft7Validator(field_config).iter_errors(custom)]
    return errors


# --- Grafana's schema --------------------------------------------------------------------------

def test_every_dashboard_and_panel_matches_grafanas_schema(grafana_schema):
    boards = {board["uid"]: board for board in dashboards(UID)}
    assert set(boards) == {RESULTS_UID, TRIALS_UID, NFVI_UID, TREND_UID, SOAK_UID}
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
    ("annotation key Grafana does not know", lambda b: b.setdefault(
        "annotations", {}).setdefault("list", []).append({"name": "x", "enable": True,
                                                          "iconColor": "red", "query": "q"})),
    ("data-source annotation without a query", lambda b: b.setdefault(
        "annotations", {}).setdefault("list", []).append({
            "name": "x", "enable": True, "iconColor": "red",
            "datasource": {"type": "influxdb", "uid": "u"}, "target": "SELECT 1"})),
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
