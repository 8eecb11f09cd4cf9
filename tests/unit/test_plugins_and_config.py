import subprocess
import sys
from pathlib import Path

import pytest

from nsb import config
from nsb.errors import NsbError, PrerequisiteError
from tests.conftest import ROOT, SAMPLE


def test_plugin_list_shows_every_namespace_with_descriptions(nsb_main):
    code, out, _ = nsb_main("plugin", "list")
    assert code == 0
    for namespace in ("nsb.contexts:", "nsb.vnfs:", "nsb.traffic_profiles:", "nsb.runners:",
                      "nsb.outputs:"):
        assert namespace in out
    assert "netns" in out and "Embedded lab" in out
    assert "ProxBinSearchProfile" in out and "RFC 2544 throughput" in out


def test_plugin_list_one_namespace(nsb_main):
    code, out, _ = nsb_main("plugin", "list", "vnfs")
    assert code == 0
    assert "testpmd" in out and "trafgen" in out and "netns" not in out


def test_plugin_list_unknown_namespace(nsb_main):
    code, _, err = nsb_main("plugin", "list", "widgets")
    assert code == 2 and "nsb.vnfs" in err


def test_sample_config_is_generated_from_the_options(tmp_path):
    out = tmp_path / "nsb.conf.sample"
    subprocess.run([str(Path(sys.executable).parent / "oslo-config-generator"), "--namespace",
                    "nsb", "--wrap-width", "79", "--output-file", str(out)], check=True)
    assert out.read_text() == (ROOT / "etc/nsb/nsb.conf.sample").read_text(), \
        "run `tox -e genconfig` (or `make genconfig`) to refresh etc/nsb/nsb.conf.sample"


def test_config_file_sets_directories(tmp_path):
    conf_file = tmp_path / "nsb.conf"
    conf_file.write_text("[DEFAULT]\nresults_dir = /srv/results\nlog_dir = /srv/logs\n")
    conf = config.load([str(conf_file)])
    assert conf.results_dir == "/srv/results" and conf.log_dir == "/srv/logs"


def test_missing_config_file_is_a_clear_error(nsb_main, tmp_path):
    code, _, err = nsb_main("--config-file", str(tmp_path / "none.conf"), "task", "validate",
                            str(SAMPLE))
    assert code == 2 and "config file not found" in err


def test_bad_config_value(tmp_path):
    conf_file = tmp_path / "nsb.conf"
    conf_file.write_text("[DEFAULT]\nvnf_start_timeout = soon\n")
    with pytest.raises(NsbError, match="vnf_start_timeout"):
        config.load([str(conf_file)])


def test_netns_context_without_root_is_one_clear_error(monkeypatch, tmp_path):
    from nsb import engine
    from nsb.runinfo import RunInfo
    from nsb.task import loader

    task = loader.load(SAMPLE)
    plan = engine.plan(task, RunInfo("deadbeef", task, tmp_path))
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(PrerequisiteError, match="needs root"):
        plan.context.deploy()


def test_dry_run_prints_plan_and_touches_nothing(nsb_main, results_conf, tmp_path):
    code, out, err = nsb_main("--config-file", str(results_conf), "task", "start", str(SAMPLE),
                              "--dry-run")
    assert code == 0, err
    assert "tg:xe0 <-> sut:xe0" in out and "net_af_packet0,iface=xe0" in out
    assert "xe0 -> sut:xe0 ... sut:xe1 -> xe1" in out
    assert not (tmp_path / "results").exists()
