"""`nsb grafana push` against the Grafana HTTP API double (tests/doubles/grafana_api.py).

Grafana cannot be installed here; the double checks every request against
Grafana's documented HTTP API and answers as Grafana does. The push goes through
nsb's Grafana client over real HTTP on the loopback interface.
"""

from __future__ import annotations

import argparse
import json
import socket
import urllib.error
import urllib.request

import pytest

from nsb.errors import NsbError
from nsb.grafana import cli as grafana_cli
from nsb.grafana.api import GrafanaAuthError, GrafanaError, GrafanaUnreachable, push
from nsb.grafana.dashboards import dashboards
from nsb.grafana.datasource import InfluxDataSource
from tests.doubles.grafana_api import GrafanaApiDouble

TOKEN = "glsa_admin-token-for-the-double"
VIEWER = "glsa_viewer-token"
INFLUX_TOKEN = "influx-secret-token"
BOARD_UIDS = {"nsb-results", "nsb-trials", "nsb-nfvi", "nsb-trend", "nsb-soak"}


@pytest.fixture
def grafana():
    with GrafanaApiDouble({TOKEN: "Admin", VIEWER: "Viewer"}) as double:
        yield double


def influx() -> InfluxDataSource:
    return InfluxDataSource(url="http://influxdb.lab:8086", bucket="nsb", token=INFLUX_TOKEN)


def calls(grafana, start: int = 0) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in grafana.requests[start:]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_push_twice_creates_then_updates_without_duplicates(grafana):
    first = push(grafana.url, TOKEN, influx())
    assert first.datasource_created and first.datasource_uid == "nsb-influxdb"
    assert first.grafana_version == "11.6.0"
    assert calls(grafana) == [("GET", "/api/health"),
                              ("GET", "/api/datasources/name/nsb-influxdb"),
                              ("POST", "/api/datasources")] + [("POST", "/api/dashboards/db")] * 5
    assert {b.uid: b.version for b in first.dashboards} == dict.fromkeys(BOARD_UIDS, 1)
    assert {b.url for b in first.dashboards} == {
        f"{grafana.url}/d/nsb-results/nsb-results",
        f"{grafana.url}/d/nsb-trials/nsb-trial-timeline",
        f"{grafana.url}/d/nsb-nfvi/nsb-nfvi-and-vnf-kpis",
        f"{grafana.url}/d/nsb-trend/nsb-trend",
        f"{grafana.url}/d/nsb-soak/nsb-soak-and-plrsearch"}

    seen = len(grafana.requests)
    second = push(grafana.url, TOKEN, influx())
    assert not second.datasource_created and second.datasource_uid == first.datasource_uid
    assert calls(grafana, seen) == [("GET", "/api/health"),
                                    ("GET", "/api/datasources/name/nsb-influxdb"),
                                    ("PUT", "/api/datasources/uid/nsb-influxdb")] + \
        [("POST", "/api/dashboards/db")] * 5
    assert {b.uid: b.version for b in second.dashboards} == dict.fromkeys(BOARD_UIDS, 2)

    state = grafana.state
    assert list(state.datasources) == ["nsb-influxdb"]
    assert set(state.dashboards) == BOARD_UIDS
    assert grafana.violations == []
    for request in grafana.requests:
        if request.path != "/api/health":
            assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    for request in grafana.requests:
        if request.path == "/api/dashboards/db":
            assert request.body["overwrite"] is True and request.body["dashboard"].get("id") is None


def test_what_grafana_holds_after_a_push(grafana):
    push(grafana.url, TOKEN, influx())
    source = grafana.state.datasources["nsb-influxdb"]
    assert (source["type"], source["access"], source["url"]) == ("influxdb", "proxy",
                                                                 "http://influxdb.lab:8086")
    assert source["jsonData"] == {"version": "InfluxQL", "dbName": "nsb", "httpMode": "GET",
                                  "httpHeaderName1": "Authorization"}
    assert grafana.state.secrets["nsb-influxdb"] == {"httpHeaderValue1": f"Token {INFLUX_TOKEN}"}
    expected = {board["uid"]: board for board in dashboards("nsb-influxdb")}
    assert {uid: saved["dashboard"] for uid, saved in grafana.state.dashboards.items()} == expected
    # Grafana never hands the secret back
    with urllib.request.urlopen(urllib.request.Request(
            f"{grafana.url}/api/datasources/name/nsb-influxdb",
            headers={"Authorization": f"Bearer {TOKEN}"})) as answer:
        body = answer.read().decode()
    assert INFLUX_TOKEN not in body
    assert json.loads(body)["secureJsonFields"] == {"httpHeaderValue1": True}


def test_an_existing_data_source_of_that_name_is_updated_and_used(grafana):
    request = urllib.request.Request(
        f"{grafana.url}/api/datasources", method="POST",
        data=json.dumps({"name": "nsb-influxdb", "type": "influxdb", "access": "proxy",
                         "url": "http://old:8086"}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        uid = json.loads(answer.read())["datasource"]["uid"]
    assert uid != "nsb-influxdb"
    result = push(grafana.url, TOKEN, influx())
    assert not result.datasource_created and result.datasource_uid == uid
    assert grafana.state.datasources[uid]["url"] == "http://influxdb.lab:8086"
    for saved in grafana.state.dashboards.values():
        for panel in saved["dashboard"]["panels"]:
            assert panel["datasource"]["uid"] == uid
    assert grafana.violations == []


def test_a_push_without_the_influxdb_token_keeps_the_one_grafana_has(grafana):
    push(grafana.url, TOKEN, influx())
    push(grafana.url, TOKEN, InfluxDataSource(url="http://influxdb.lab:8086", bucket="nsb"))
    source = grafana.state.datasources["nsb-influxdb"]
    assert source["jsonData"]["httpHeaderName1"] == "Authorization"
    assert grafana.state.secrets["nsb-influxdb"] == {"httpHeaderValue1": f"Token {INFLUX_TOKEN}"}


def test_grafana_under_a_sub_path():
    with GrafanaApiDouble({TOKEN: "Admin"}, sub_path="/grafana") as grafana:
        assert grafana.url.endswith("/grafana")
        result = push(grafana.url, TOKEN, influx())
        assert {p for _, p in calls(grafana)} == {
            "/grafana/api/health", "/grafana/api/datasources/name/nsb-influxdb",
            "/grafana/api/datasources", "/grafana/api/dashboards/db"}
        assert f"{grafana.url}/d/nsb-results/nsb-results" in {b.url for b in result.dashboards}
        assert grafana.violations == []


def test_a_wrong_token_is_a_clear_error_and_changes_nothing(grafana):
    with pytest.raises(GrafanaAuthError) as error:
        push(grafana.url, "glsa_not-a-token", influx())
    message = str(error.value)
    assert "401 Unauthorized" in message and grafana.url in message and "--token" in message
    assert "glsa_not-a-token" not in message and INFLUX_TOKEN not in message
    assert grafana.state.datasources == {} and grafana.state.dashboards == {}
    assert grafana.violations == []


def test_a_token_without_the_admin_role_is_told_so(grafana):
    with pytest.raises(GrafanaAuthError, match="403 Forbidden.*Admin role"):
        push(grafana.url, VIEWER, influx())
    assert grafana.state.datasources == {}


def test_no_grafana_at_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(GrafanaUnreachable, match=f"cannot reach Grafana at {url}: connection "
                                                  "refused"):
        push(url, TOKEN, influx(), timeout=5)


def test_the_password_in_a_url_stays_out_of_messages():
    url = f"http://admin:hunter2@127.0.0.1:{free_port()}/grafana"
    with pytest.raises(GrafanaUnreachable) as error:
        push(url, None, influx(), timeout=5)
    assert "hunter2" not in str(error.value) and "/grafana" in str(error.value)


def test_the_double_catches_requests_off_grafanas_api(grafana):
    """The checks the push tests rely on do fail on a wrong request."""
    def send(method, path, body=None, auth=f"Bearer {TOKEN}"):
        request = urllib.request.Request(
            grafana.url + path, method=method, data=json.dumps(body).encode() if body else None,
            headers={"Authorization": auth, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status
        except urllib.error.HTTPError as exc:
            return exc.code

    assert send("POST", "/api/datasources", {"name": "x", "type": "influxdb", "access": "proxy",
                                             "dbName": "nsb"}) == 400
    assert send("POST", "/api/datasources/uid/x", {"name": "x"}) == 405
    assert send("GET", "/api/dashboards/uid/nsb-results") == 404
    assert send("GET", "/api/datasources/name/x", auth=f"Token {TOKEN}") == 401
    assert send("POST", "/api/dashboards/db", {"dashboard": {"title": "t", "uid": "a b",
                                                             "schemaVersion": 41,
                                                             "panels": []}}) == 400
    assert send("POST", "/api/dashboards/db", {"dashboard": {
        "title": "a", "uid": "a", "schemaVersion": 41, "panels": [], "annotations": {"list": [
            {"name": "x", "enable": True, "iconColor": "red",
             "datasource": {"type": "influxdb", "uid": "u"},
             "target": {"refId": "Anno", "query": "SELECT text FROM e", "rawQuery": True,
                        "textColumn": "text", "tagsColumn": ""}}]}}}) == 200
    assert len(grafana.violations) == 6, grafana.violations
    assert grafana.violations[-1].endswith("annotations.list[0].target.query: no $timeFilter")


def test_the_trend_dashboard_marks_regressions_and_progressions(grafana):
    """Its two annotation queries (nsb_trend points with change < 0 and > 0, the text
    column nsb report trend --annotate writes) are saved as Grafana's JSON model has
    them; that the queries find the marks is checked on InfluxDB 1.6
    (test_influxdb_output)."""
    push(grafana.url, TOKEN, influx())
    assert grafana.violations == []
    board = grafana.state.dashboards["nsb-trend"]["dashboard"]
    marks = board["annotations"]["list"]
    assert [(a["name"], a["iconColor"]) for a in marks] == [
        ("regressions (jumpavg)", "red"), ("progressions (jumpavg)", "green")]
    for anno, sign in zip(marks, "<>", strict=True):
        assert anno["datasource"] == {"type": "influxdb", "uid": "nsb-influxdb"}
        assert f'"change" {sign} 0' in anno["target"]["query"]
        assert anno["target"]["textColumn"] == "text"
    assert "Trend groups (jumpavg, packets/s)" in [p["title"] for p in board["panels"]]


# --- the command line ------------------------------------------------------------------------

@pytest.fixture
def nsb_conf(tmp_path, monkeypatch):
    """An nsb.conf whose [influxdb] is what the influxdb output writes to; a clean environment."""
    for variable in ("NSB_INFLUXDB_TOKEN", "NSB_INFLUXDB_PASSWORD", "NSB_GRAFANA_TOKEN",
                     "NSB_GRAFANA_URL"):
        monkeypatch.delenv(variable, raising=False)
    conf = tmp_path / "nsb.conf"
    conf.write_text("[influxdb]\nurl = http://influx.lab:8086\napi = v2\nbucket = perf\n"
                    "token = conf-token\n")
    return conf


def run_cli(conf, *argv: str) -> int:
    """`nsb --config-file CONF grafana ...` as nsb.cli wires it: register(), then the handler."""
    parser = argparse.ArgumentParser(prog="nsb")
    parser.add_argument("--config-file", action="append")
    grafana_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["--config-file", str(conf), *argv])
    return args.handler(args)


def test_cli_push_points_grafana_where_the_influxdb_output_writes(grafana, nsb_conf, capsys,
                                                                  monkeypatch):
    assert run_cli(nsb_conf, "grafana", "push", "--url", grafana.url, "--token", TOKEN) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("Grafana 11.6.0: data source nsb-influxdb (uid nsb-influxdb) created: "
                      "http://influx.lab:8086 bucket perf")
    assert f"  nsb: results (version 1): {grafana.url}/d/nsb-results/nsb-results" in out
    assert len(out) == 6  # the data source line and five dashboards
    source = grafana.state.datasources["nsb-influxdb"]
    assert (source["url"], source["jsonData"]["dbName"]) == ("http://influx.lab:8086", "perf")
    assert grafana.state.secrets["nsb-influxdb"] == {"httpHeaderValue1": "Token conf-token"}
    monkeypatch.setenv("NSB_INFLUXDB_TOKEN", INFLUX_TOKEN)  # the environment beats nsb.conf
    monkeypatch.setenv("NSB_GRAFANA_TOKEN", TOKEN)
    assert run_cli(nsb_conf, "grafana", "push", "--url", grafana.url) == 0
    assert "(uid nsb-influxdb) updated" in capsys.readouterr().out
    assert grafana.state.secrets["nsb-influxdb"] == {"httpHeaderValue1": f"Token {INFLUX_TOKEN}"}
    assert grafana.violations == []


def test_cli_options_override_nsb_conf(grafana, nsb_conf, capsys):
    assert run_cli(nsb_conf, "grafana", "push", "--url", grafana.url, "--token", TOKEN,
                   "--influx-url", "http://influxdb:8086", "--influx-database", "lab",
                   "--influx-user", "reader", "--influx-password", "pw",
                   "--datasource-name", "lab influx") == 0
    assert "data source lab influx" in capsys.readouterr().out
    assert calls(grafana)[1] == ("GET", "/api/datasources/name/lab%20influx")
    (source,) = grafana.state.datasources.values()
    assert (source["name"], source["url"], source["database"], source["user"]) == (
        "lab influx", "http://influxdb:8086", "lab", "reader")
    assert "httpHeaderName1" not in source["jsonData"]
    assert grafana.state.secrets[source["uid"]] == {"password": "pw"}
    assert grafana.violations == []


def test_cli_push_errors_are_nsb_errors(grafana, nsb_conf):
    with pytest.raises(NsbError, match="401"):
        run_cli(nsb_conf, "grafana", "push", "--url", grafana.url, "--token", "wrong")
    with pytest.raises(GrafanaError, match="must start with http"):
        run_cli(nsb_conf, "grafana", "push", "--url", "localhost:3000", "--token", TOKEN)
    nsb_conf.write_text("[influxdb]\nurl = http://nsb:secret@influx:8086\n")
    with pytest.raises(NsbError, match=r"nsb.conf \[influxdb\] url") as error:
        run_cli(nsb_conf, "grafana", "push", "--url", grafana.url, "--token", TOKEN)
    assert "secret" not in str(error.value)


def test_cli_export(tmp_path, nsb_conf, capsys):
    assert run_cli(nsb_conf, "grafana", "export", str(tmp_path / "prov"),
                   "--grafana-path", "/etc/grafana/provisioning") == 0
    printed = capsys.readouterr().out.split()
    assert sorted(printed) == sorted(str(p) for p in (tmp_path / "prov").rglob("*") if p.is_file())
    assert len(printed) == 7  # five dashboards, their provider, the data source
    text = (tmp_path / "prov/datasources/nsb.yaml").read_text()
    assert "http://influx.lab:8086" in text and "dbName: perf" in text
    assert "conf-token" not in text and "${NSB_INFLUXDB_TOKEN}" in text
