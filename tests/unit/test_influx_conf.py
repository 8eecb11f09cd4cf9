"""nsb.conf and the outputs: the outputs every task gets, and the InfluxDB settings
resolved as task > environment > what nsb.conf sets > the output's defaults
(Yardstick's yardstick.conf spelling read as nsb's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nsb import config, engine, plugins
from nsb.errors import NsbError
from nsb.outputs.influxdb.output import InfluxDbOutput
from nsb.outputs.influxdb.settings import origins, resolve
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from tests.conftest import SAMPLE

SECRET = "pw-Kq7-never-shown"


def load_conf(tmp_path: Path, text: str):
    path = tmp_path / "nsb.conf"
    path.write_text(text)
    return config.load([str(path)])


def influx_output(tmp_path: Path, conf, options: dict | None = None) -> InfluxDbOutput:
    """The output as a run builds it: the task's options and what nsb.conf sets."""
    options = dict(options or {})
    spec = PluginSpec("influxdb", options, Where(LocatedDocument(options, "t.yaml"), ()))
    run = RunInfo("t1", loader.load(SAMPLE), tmp_path,
                  output_defaults=config.output_defaults(conf))
    return InfluxDbOutput(spec, plugins.check_options(InfluxDbOutput, spec), run)


# ----------------------------------------------------------------------------- settings

def test_only_what_nsb_conf_sets_is_handed_to_the_output(tmp_path):
    conf = load_conf(tmp_path, "[influxdb]\nurl = http://lab:8086\ndatabase = lab\n")
    assert config.output_defaults(conf) == {
        "influxdb": {"url": "http://lab:8086", "database": "lab"}}
    assert config.output_defaults(load_conf(tmp_path, "")) == {"influxdb": {}}


def test_a_conf_database_means_v1_for_a_task_output_that_names_no_api(tmp_path):
    conf = load_conf(tmp_path, "[influxdb]\nurl = http://lab:8086\ndatabase = lab\n")
    settings = influx_output(tmp_path, conf).settings
    assert (settings.api, settings.url, settings.database) == ("v1", "http://lab:8086", "lab")
    assert settings.target == "http://lab:8086 database lab"


@pytest.mark.parametrize("conf_text, task, want", [
    # the schema's defaults never hide what nsb.conf sets
    ("batch_size = 5\nbucket = perf\n", {}, {"api": "v2", "bucket": "perf", "batch_size": 5}),
    ("api = v1\n", {}, {"api": "v1", "database": "nsb"}),
    ("api = v2\ndatabase = lab\n", {}, {"api": "v2", "bucket": "nsb"}),
    ("username = nsb\n", {}, {"api": "v1", "username": "nsb"}),
    ("org =\ndatabase = lab\n", {}, {"api": "v1", "database": "lab"}),  # empty says nothing
    # the task wins, key by key and for the API its keys imply
    ("database = lab\nbatch_size = 5\n", {"batch_size": 3}, {"api": "v1", "database": "lab",
                                                             "batch_size": 3}),
    ("database = lab\n", {"database": "mine"}, {"api": "v1", "database": "mine"}),
    ("database = lab\n", {"bucket": "b"}, {"api": "v2", "bucket": "b"}),
    ("database = lab\n", {"api": "v2"}, {"api": "v2", "bucket": "nsb"}),
    ("bucket = b\norg = o\n", {"url": "http://t:1"}, {"api": "v2", "url": "http://t:1",
                                                       "bucket": "b", "org": "o"}),
    ("api = v2\n", {"database": "x"}, {"api": "v1", "database": "x"}),
])
def test_task_over_nsb_conf_over_defaults(tmp_path, conf_text, task, want):
    settings = influx_output(tmp_path, load_conf(tmp_path, "[influxdb]\n" + conf_text),
                             task).settings
    assert {key: getattr(settings, key) for key in want} == want


def test_the_environment_sits_between_nsb_conf_and_the_task():
    conf = {"database": "lab", "password": "from-conf"}
    assert resolve({}, conf, environ={}).password == "from-conf"
    assert resolve({}, conf, environ={"NSB_INFLUXDB_PASSWORD": "env"}).password == "env"
    assert resolve({"password": "task"}, conf,
                   environ={"NSB_INFLUXDB_PASSWORD": "env"}).password == "task"
    # a token from the environment does not make a conf with a database write to v2
    assert resolve({}, conf, environ={"NSB_INFLUXDB_TOKEN": "t"}).api == "v1"
    assert origins({"batch_size": 3, "password": "x"}, {"database": "lab", "batch_size": 5},
                   environ={"NSB_INFLUXDB_PASSWORD": "env"}) == {
        "task": ["batch_size", "password"], "nsb.conf": ["database"]}


def test_nsb_conf_naming_both_apis_is_one_line_naming_the_section(tmp_path):
    conf = load_conf(tmp_path, "[influxdb]\ndatabase = lab\nbucket = b\n")
    with pytest.raises(NsbError) as info:
        influx_output(tmp_path, conf)
    assert str(info.value) == ("nsb.conf [influxdb] api: database (api v1) and bucket (api v2) "
                               "are both set: set api = v1 or api = v2")
    # the task saying which API it means settles it
    assert influx_output(tmp_path, conf, {"api": "v1"}).settings.database == "lab"


def test_the_output_says_where_each_setting_came_from_without_secrets(tmp_path, monkeypatch):
    monkeypatch.delenv("NSB_INFLUXDB_PASSWORD", raising=False)
    conf = load_conf(tmp_path, f"[influxdb]\ndatabase = lab\npassword = {SECRET}\n")
    described = influx_output(tmp_path, conf, {"batch_size": 3}).describe()
    assert described["settings_from"] == {"task": ["batch_size"],
                                          "nsb.conf": ["database", "password"]}
    assert described["password"] == "<secret>" and SECRET not in json.dumps(described)


# ----------------------------------------------------------------------------- Yardstick

YARDSTICK_CONF = f"""[DEFAULT]
dispatcher = influxdb

[dispatcher_influxdb]
timeout = 5
target = http://127.0.0.1:8086
db_name = yardstick
username = root
password = {SECRET}
"""


def test_yardstick_conf_reads_as_nsb_conf(tmp_path):
    conf = load_conf(tmp_path, YARDSTICK_CONF)
    assert conf.outputs == ["influxdb"]
    assert config.output_defaults(conf)["influxdb"] == {
        "url": "http://127.0.0.1:8086", "database": "yardstick", "username": "root",
        "password": SECRET, "timeout_s": 5.0}
    settings = influx_output(tmp_path, conf).settings
    assert (settings.api, settings.database, settings.timeout_s) == ("v1", "yardstick", 5.0)


def test_nsb_spelling_wins_over_yardstick_spelling(tmp_path):
    conf = load_conf(tmp_path, YARDSTICK_CONF + "[influxdb]\ndatabase = nsb_own\n"
                     "[DEFAULT]\noutputs = file\n")
    assert conf.outputs == ["file"]
    assert config.output_defaults(conf)["influxdb"]["database"] == "nsb_own"


@pytest.mark.parametrize("text, words", [
    ("[DEFAULT]\ndispatcher = http\n", "[DEFAULT] dispatcher: unknown output 'http'; "
                                       "outputs: file, influxdb"),
    ("[DEFAULT]\noutputs = file, influxd\n", "[DEFAULT] outputs: unknown output 'influxd'"),
    ("[dispatcher_influxdb]\ntimeout = soon\n", "[dispatcher_influxdb] timeout: not valid"),
    ("[dispatcher_influxdb]\nfile_path = /tmp/x\n", "[dispatcher_influxdb] file_path: "
                                                    "unknown option"),
])
def test_bad_nsb_conf_outputs_are_one_line_naming_the_key(tmp_path, text, words):
    with pytest.raises(NsbError) as info:
        load_conf(tmp_path, text)
    message = str(info.value)
    assert words in message and str(tmp_path / "nsb.conf") in message
    assert len(message.splitlines()) == 1


# ----------------------------------------------------------------------------- outputs

def plan_outputs(tmp_path: Path, conf, task_outputs: list | None = None) -> list[dict]:
    task = loader.load(SAMPLE)
    if task_outputs is not None:
        where = task.outputs[0].where
        task = type(task)(**{**task.__dict__, "outputs": tuple(
            PluginSpec(o["type"], {k: v for k, v in o.items() if k != "type"}, where)
            for o in task_outputs)})
    run = RunInfo("t1", task, tmp_path, output_defaults=config.output_defaults(conf),
                  conf_outputs=tuple(conf.outputs))
    return engine.plan(task, run).describe()["outputs"]


def test_nsb_conf_outputs_are_added_to_every_task_once(tmp_path):
    conf = load_conf(tmp_path, "[DEFAULT]\noutputs = file,influxdb,influxdb\n"
                               "[influxdb]\ndatabase = lab\n")
    shown = plan_outputs(tmp_path, conf)  # the sample names file only
    assert [(o["type"], o["from"]) for o in shown] == [("file", "task"),
                                                       ("influxdb", "nsb.conf")]
    assert (shown[1]["api"], shown[1]["database"]) == ("v1", "lab")
    # a task that names influxdb keeps its own, with its options, and gets no second one
    shown = plan_outputs(tmp_path, conf, [{"type": "influxdb", "batch_size": 3}])
    assert [(o["type"], o["from"]) for o in shown] == [("influxdb", "task"),
                                                       ("file", "nsb.conf")]
    assert (shown[0]["database"], shown[0]["batch_size"]) == ("lab", 3)
    assert shown[0]["settings_from"] == {"task": ["batch_size"], "nsb.conf": ["database"]}
    # nothing in nsb.conf: the task's outputs only
    assert [o["type"] for o in plan_outputs(tmp_path, load_conf(tmp_path, ""))] == ["file"]


def test_dry_run_shows_the_outputs_and_who_gave_them_without_secrets(nsb_main, tmp_path):
    conf = tmp_path / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/results\nlog_dir = {tmp_path}/logs\n"
                    + YARDSTICK_CONF.replace("[DEFAULT]\n", ""))
    code, out, err = nsb_main("--config-file", str(conf), "task", "start", str(SAMPLE),
                              "--dry-run")
    assert code == 0, err
    shown = out.split("\noutputs:\n", 1)[1]
    assert "- type: file\n  from: task\n" in shown
    assert "- type: influxdb\n  from: nsb.conf\n" in shown and "database: yardstick" in shown
    assert SECRET not in out + err and "password: <secret>" in out
    assert "deprecated" not in err.lower()  # Yardstick's names are read, not frowned upon
    assert not (tmp_path / "results").exists()


def test_an_unknown_output_in_nsb_conf_exits_2_with_one_line(nsb_main, tmp_path):
    conf = tmp_path / "nsb.conf"
    conf.write_text("[DEFAULT]\ndispatcher = file,http\n")
    code, out, err = nsb_main("--config-file", str(conf), "task", "validate", str(SAMPLE))
    assert code == 2 and not out
    assert err.strip() == (f"nsb: error: bad configuration: {conf}: [DEFAULT] dispatcher: "
                           "unknown output 'http'; outputs: file, influxdb")
