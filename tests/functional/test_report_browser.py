"""`nsb report html` in a real browser: headless Chromium (Debian's `chromium`)
loads the file, takes a screenshot and tells what it rendered.

Chromium is driven with the DevTools protocol over a pipe
(``--remote-debugging-pipe``: fd 3 in, fd 4 out, NUL-separated JSON), so no
port, no websocket library and no network are involved. The results are real:
one task from the embedded lab (netns, testpmd, trafgen: platform facts and
NFVi KPIs included) and one from the pipeline with the simulated DUT double,
compared with each other.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from nsb import engine
from nsb.outputs.file import FileOutput
from nsb.report import commands, compare
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import NSB, ROOT, SAMPLE, requires_root
from tests.doubles.null_context import NullContext
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.functional.chromium import Chromium

FRAMES = [64, 1518]
VIEWPORT = (1400, 1000)


# --- reading the screenshot back (PNG, 8-bit RGB/RGBA, not interlaced) --------------------

def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the unfiltered rows of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, header = 8, b"", None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytes(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + (left + previous[i]) // 2) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = previous[i], previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, channels)]


# --- the results the report is made from ----------------------------------------------------

def run_lab_task(tmp: Path) -> str:
    """The embedded-lab sample through `nsb task start` (real trafgen and testpmd)."""
    conf = tmp / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp}/results\nlog_dir = {tmp}/logs\n")
    done = subprocess.run([*NSB, "--config-file", str(conf), "task", "start", str(SAMPLE),
                           "--task-args", json.dumps({"duration_s": 1, "packet_sizes": FRAMES})],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ids = [p.name for p in (tmp / "results").iterdir() if (p / "results.json").is_file()]
    assert len(ids) == 1, ids
    return ids[0]


def run_simulated_task(results_dir: Path, task_id: str, capacity_pps: float) -> None:
    task = loader.load(SAMPLE, {"packet_sizes": FRAMES, "duration_s": 1})
    run = RunInfo(task_id, task, results_dir / task_id)
    real = engine.plan(task, run)
    real.scenarios[0].vnfs = []
    real.scenarios[0].generator = SimulatedDutGenerator(capacity_pps)
    plan = engine.Plan(task, run, NullContext(task.context, {}, run), real.scenarios,
                       [FileOutput(task.outputs[0], {}, run)])
    engine.execute(plan)


def nsb_report(*argv: str) -> int:
    """`nsb report ...` through the arguments commands.register() adds."""
    parser = argparse.ArgumentParser(prog="nsb")
    parser.add_argument("--config-file", action="append")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


RENDERED = """(() => {
  const charts = {};
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const svg = gd.querySelector('svg.main-svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    const frame = gd.closest('figure').getBoundingClientRect();
    charts[gd.id] = {
      traces: gd.data.map(t => ({name: t.name, type: t.type,
        n: t.type === 'heatmap' ? t.z.flat().filter(v => v !== null).length
                                : t.x.filter((x, i) => x !== null && t.y[i] !== null).length})),
      markers: gd.querySelectorAll('.scatterlayer .trace .points path.point').length,
      bars: gd.querySelectorAll('.barlayer .trace .point path').length,
      barTexts: [...gd.querySelectorAll('.barlayer .trace .point text.bartext')].map(
        t => t.textContent),
      heatmaps: gd.querySelectorAll('.heatmaplayer .hm image').length,
      width: box.width, height: box.height, frameWidth: frame.width,
      drawn: !!gd._fullLayout && gd.querySelectorAll('svg.main-svg').length > 0,
    };
  }
  const tables = {};
  for (const table of document.querySelectorAll('table[id]')) {
    tables[table.id] = [...table.querySelectorAll('tbody tr')].map(
      tr => [...tr.children].map(cell => cell.textContent.trim()));
  }
  return JSON.stringify({charts, tables});
})()"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    requires_root()
    tmp = tmp_path_factory.mktemp("report")
    lab_id = run_lab_task(tmp)
    run_simulated_task(tmp / "results", "simdut01", 60_000.0)
    out = tmp / "report.html"
    assert nsb_report("report", "html", lab_id, "simdut01", "--results-dir",
                      str(tmp / "results"), "-o", str(out)) == 0
    docs = [json.loads((tmp / "results" / i / "results.json").read_text())
            for i in (lab_id, "simdut01")]
    rendered, shot, events = open_in_chromium(out, tmp)
    return {"ids": [lab_id, "simdut01"], "docs": docs, "rendered": rendered, "png": shot,
            "events": events, "html": out}


def open_in_chromium(page: Path, tmp: Path) -> tuple[dict, bytes, list]:
    """What Chromium rendered of ``page`` (charts and tables), its screenshot and the
    DevTools events it sent."""
    browser = Chromium(tmp / "profile")
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.page(f"{domain}.enable")
        browser.page("Emulation.setDeviceMetricsOverride", width=VIEWPORT[0],
                     height=VIEWPORT[1], deviceScaleFactor=1, mobile=False)
        browser.page("Page.navigate", url=page.as_uri())
        browser.wait_for_event("Page.loadEventFired")
        settled = browser.page("Runtime.evaluate", awaitPromise=True, returnByValue=True,
                               expression="new Promise(r => requestAnimationFrame("
                                          "() => requestAnimationFrame(() => r(1))))")
        assert settled["result"]["value"] == 1
        found = browser.page("Runtime.evaluate", expression=RENDERED, returnByValue=True)
        rendered = json.loads(found["result"]["value"])
        shot = base64.b64decode(browser.page("Page.captureScreenshot", format="png")["data"])
        (tmp / f"{page.stem}.png").write_bytes(shot)
        return rendered, shot, list(browser.events)
    finally:
        browser.close()


def test_page_loads_without_console_errors(report):
    events = report["events"]
    errors = [e["params"] for e in events if e.get("method") == "Runtime.exceptionThrown"]
    errors += [e["params"] for e in events if e.get("method") == "Runtime.consoleAPICalled"
               and e["params"]["type"] in ("error", "assert")]
    errors += [e["params"] for e in events if e.get("method") == "Log.entryAdded"
               and e["params"]["entry"]["level"] == "error"]
    assert errors == []


def test_page_fetches_nothing_from_the_network(report):
    requested = [e["params"]["request"]["url"] for e in report["events"]
                 if e.get("method") == "Network.requestWillBeSent"]
    assert requested[0] == report["html"].as_uri()
    # self-contained: nothing else fetched (plotly draws heat maps as data: images)
    assert [url for url in requested[1:] if not url.startswith(("data:", "blob:"))] == []


def test_screenshot_is_a_non_blank_png(report):
    width, height, pixels = png_pixels(report["png"])
    assert (width, height) == VIEWPORT
    colours = Counter(pixels)
    assert len(colours) > 50  # text, tables and the header band, not a blank page
    (_, background), = colours.most_common(1)
    assert len(pixels) - background > 0.05 * len(pixels)


def expected_scenario_charts(doc: dict, prefix: str) -> dict[str, dict]:
    """Chart id -> rendered markers/bars/heat map cells the results call for."""
    results, trials, kpis = doc["results"], doc["trials"], doc["kpis"]
    frames = len(results)
    stats = sum(1 for r in results for key in ("min_us", "p50_us", "avg_us", "p90_us",
                                               "p99_us", "p99_9_us", "max_us")
                if (r.get("latency") or {}).get(key) is not None)
    charts = {f"{prefix}-throughput-chart": {  # labelled with their share of line rate
        "bars": frames, "markers": 0,
        "texts": [f"{r['line_rate_pct']:.2f} %" for r in results]},
              f"{prefix}-latency-chart": {"bars": 0, "markers": stats}}
    for frame in FRAMES:
        count = sum(t["frame_size"] == frame for t in trials)
        assert count >= 1
        # offered (coloured by verdict) and actually sent, one of each per trial
        charts[f"{prefix}-trajectory-{frame}-chart"] = {"bars": 0, "markers": 2 * count}
    buckets = sum(len((r.get("latency") or {}).get("histogram") or []) for r in results)
    if buckets:
        charts[f"{prefix}-histogram-chart"] = {"bars": buckets, "markers": 0}
    cpu = {(k["source"], key, k["trial_index"]) for k in kpis
           if k["source"].startswith("nfvi:") for key in ("cpu_user_pct", "cpu_system_pct")}
    if cpu:
        charts[f"{prefix}-cpu-chart"] = {"bars": 0, "markers": len(cpu)}
    nodes = sorted({k["node"] for k in kpis if k["source"].startswith("node:")})
    for number, node in enumerate(nodes, start=1):
        cells = {(key, k["trial_index"]) for k in kpis if k["source"] == f"node:{node}"
                 for key in k["kpis"]}
        charts[f"{prefix}-cores{number}-chart"] = {"bars": 0, "markers": 0, "cells": len(cells)}
    return charts


def test_every_chart_rendered_its_data_points(report):
    lab, simulated = report["docs"]
    latency_points = sum(1 for doc in (lab, simulated) for r in doc["results"]
                         for key in ("avg_us", "p99_us")
                         if (r.get("latency") or {}).get(key) is not None)
    expected = {**expected_scenario_charts(lab, "t1-s1"),
                **expected_scenario_charts(simulated, "t2-s1"),
                "cmp1-throughput-chart": {  # the other task's bars: % difference
                    "bars": 2 * len(FRAMES), "markers": 0,
                    "texts": [f"{r['line_rate_pct']:.2f} %" for r in lab["results"]] + [
                        f"{compare.pct_diff(a['throughput_pps'], b['throughput_pps']):+.1f} %"
                        for a, b in zip(lab["results"], simulated["results"], strict=True)
                        if a["throughput_pps"]]},
                "cmp1-latency-chart": {"bars": 0, "markers": latency_points}}
    assert "t1-s1-cpu-chart" in expected and "t1-s1-cores1-chart" in expected  # real NFVi data
    assert "t1-s1-histogram-chart" in expected
    charts = report["rendered"]["charts"]
    assert sorted(charts) == sorted(expected)
    for chart_id, want in expected.items():
        got = charts[chart_id]
        assert got["drawn"], chart_id
        assert got["markers"] == want["markers"], chart_id
        assert got["bars"] == want["bars"], chart_id
        if "texts" in want:
            assert got["barTexts"] == want["texts"], chart_id
        if "cells" in want:
            assert got["heatmaps"] == 1, chart_id
            assert sum(t["n"] for t in got["traces"]) == want["cells"], chart_id
        assert got["height"] > 200, chart_id
        assert 300 < got["width"] <= got["frameWidth"], chart_id  # the drawing fits its box


def test_summary_and_comparison_tables_show_the_results(report):
    tables = report["rendered"]["tables"]
    for n, doc in enumerate(report["docs"], start=1):
        rows = tables[f"t{n}-s1-summary-table"]
        assert [r[0] for r in rows] == [str(f) for f in FRAMES]
        assert [r[1] for r in rows] == [f"{r['throughput_pps']:,.0f}" for r in doc["results"]]
        assert [r[-1] for r in rows] == [r["limited_by"] for r in doc["results"]]
        assert len(tables[f"t{n}-s1-trials-table"]) == len(doc["trials"])
    lab, simulated = report["docs"]
    assert len(tables["t1-platform-table"]) > 10
    assert "t2-platform-table" not in tables  # the double has no nodes
    comparison = tables["cmp1-throughput-table"]
    assert [r[0] for r in comparison] == [str(f) for f in FRAMES]
    for row, base, other in zip(comparison, lab["results"], simulated["results"], strict=True):
        diff = (other["throughput_pps"] - base["throughput_pps"]) / base["throughput_pps"] * 100
        # per task: pps, Mbps, % of line rate, what limited it
        assert row[1] == f"{base['throughput_pps']:,.0f}"
        assert row[4] == base["limited_by"]
        assert row[5] == f"{other['throughput_pps']:,.0f}"
        assert row[8] == other["limited_by"]
        if "generator" in (base["limited_by"], other["limited_by"]):
            assert row[-1] == "not comparable"  # the generator's numbers, not the DUT's
            continue
        # a difference inside the results' uncertainty says so: "+1.20 (within ±3.00)"
        assert row[-1].split(" (within ±")[0] == f"{diff:+.2f}"
        assert diff == pytest.approx(
            compare.pct_diff(base["throughput_pps"], other["throughput_pps"]))
    assert len(tables["cmp1-latency-table"]) == len(FRAMES)


# --- stateful answers: connections and sessions -----------------------------------------------

@pytest.fixture(scope="module")
def stateful_report(tmp_path_factory):
    """A CPS run and a concurrent-sessions run (the stateful profiles over a DUT of known
    capacity, written by nsb's file output) in one report."""
    from nsb.traffic_profiles.stateful.concurrent import ConcurrentSessionsProfile
    from nsb.traffic_profiles.stateful.cps import CpsProfile
    from tests.doubles.stateful_dut import StatefulDutDouble, make_profile, stateful_run

    tmp = tmp_path_factory.mktemp("stateful")
    stateful_run(tmp / "results", "cps00001", "cps_nat", make_profile(
        CpsProfile, "cps", lower_cps=500, upper_cps=20000, precision_pct=5, duration=1,
        latency_at=[50]), StatefulDutDouble(dut_cps=2938))
    stateful_run(tmp / "results", "ses00001", "sessions", make_profile(
        ConcurrentSessionsProfile, "concurrent_sessions", lower_sessions=100,
        upper_sessions=10000, precision_pct=2, open_cps=2000),
        StatefulDutDouble(dut_sessions=2919))
    out = tmp / "stateful.html"
    assert nsb_report("report", "html", "cps00001", "ses00001", "--results-dir",
                      str(tmp / "results"), "-o", str(out)) == 0
    docs = [json.loads((tmp / "results" / i / "results.json").read_text())
            for i in ("cps00001", "ses00001")]
    rendered, _, events = open_in_chromium(out, tmp)
    return {"docs": docs, "rendered": rendered, "events": events}


def test_stateful_charts_draw_every_trial_in_connections_and_sessions(stateful_report):
    """Per trial: the rate asked (one marker), offered and established (one each), the
    sessions asked, established and held by the DUT; the lost connections as bars."""
    cps_doc, sessions_doc = stateful_report["docs"]
    charts = stateful_report["rendered"]["charts"]
    errors = [e for e in stateful_report["events"] if e.get("method") ==
              "Runtime.exceptionThrown"]
    assert errors == []
    cps_trials, held_trials = len(cps_doc["trials"]), len(sessions_doc["trials"])
    assert cps_trials >= 5 and held_trials >= 5
    assert charts["t1-s1-cps-chart"]["markers"] == 3 * cps_trials
    lost = [t for t in cps_doc["trials"] if t["sessions"]["failed"]]
    assert charts["t1-s1-failed-chart"]["bars"] == len(cps_doc["trials"]) and lost
    assert charts["t2-s1-sessions-chart"]["markers"] == 3 * held_trials
    assert charts["t2-s1-cps-chart"]["markers"] == 3 * held_trials
    for chart_id in ("t1-s1-cps-chart", "t1-s1-failed-chart", "t2-s1-sessions-chart"):
        assert charts[chart_id]["drawn"] and charts[chart_id]["height"] > 200, chart_id
    # a connection rate's 64 B packets are no throughput answer, nor a frame search
    assert not any(key.endswith(("-throughput-chart", "-trajectory-64-chart"))
                   for key in charts)
    # compared in connections a second: the sessions answer is no connection rate
    assert charts["cmp1-cps-chart"]["bars"] == 1


def test_the_stateful_table_shows_each_answer_in_its_own_unit(stateful_report):
    tables = stateful_report["rendered"]["tables"]
    cps_doc, sessions_doc = stateful_report["docs"]
    (cps_row,) = tables["t1-s1-stateful-table"]
    answer = cps_doc["results"][0]["stateful"]
    assert cps_row[:3] == ["cps", "tcp_cps", f"{answer['cps']:,.0f} connections/s"]
    assert cps_row[6] == f"{answer['dut_sessions']:,}" and cps_row[-1] == "dut"
    (held_row,) = tables["t2-s1-stateful-table"]
    assert held_row[2] == f"{sessions_doc['results'][0]['stateful']['sessions']:,} sessions"
    (at_half,) = tables["t1-s1-cps-at-table"]
    assert at_half[0] == "50" and at_half[-1] == "pass"
    # a connection rate against sessions held: answers of different kinds
    assert [(row[0], row[-1]) for row in tables["cmp1-throughput-table"]] == [
        ("cps", "not comparable")]
