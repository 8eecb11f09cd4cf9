"""PROX's generator in port pairs (service chains): the pairs must name ports its
config's gen and lat tasks use, each pair gets its own rate, and a .j2 config is
rendered with the pairs (the chain sample's PROX config has a gen task per chain)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from nsb.errors import TaskError
from nsb.trial import Trial
from nsb.vnfs.prox import config as prox_config
from nsb.vnfs.prox import port_pairs
from tests.conftest import ROOT

CHAINS = ROOT / "samples" / "chains" / "tc_testpmd_chains.yaml"
CONFIG = ("[port 0]\nname=p0\n[port 1]\nname=p1\n[port 2]\nname=p2\n"
          "[core 1]\nmode=gen\ntx port=p0\n[core 1]\nmode=lat\nrx port=p1\n"
          "[core 1]\nmode=lat\nrx port=p2\n")
NAMES = {0: "xe0", 1: "xe1", 2: "xe2"}


class Where:
    def error(self, message, *key):
        return TaskError(message, "task.yaml", 9, ".".join(str(k) for k in key))


def check(raw):
    tasks = prox_config.ProxConfig.parse(CONFIG, "gen.cfg").tasks()
    return port_pairs.checked(raw, [t for t in tasks if t.mode == "gen"],
                              [t for t in tasks if t.mode == "lat"], NAMES, Where())


def test_pairs_become_prox_port_numbers():
    assert check([["xe0", "xe1"]]) == [port_pairs.PortPair(0, 1, "xe0", "xe1")]


@pytest.mark.parametrize("raw, expected", [
    ([["xe1", "xe0"]], "no mode=gen task sends on xe1 (PROX port 1)"),
    ([["xe0", "xe9"]], "'xe9' is no port of this PROX (its ports: xe0, xe1, xe2)"),
    ([["xe0", "xe1"], ["xe0", "xe2"]], "port xe0 is in two pairs"),
    ([["xe2", "xe1"]], "no mode=gen task sends on xe2"),
])
def test_a_pair_the_config_cannot_send_or_count_is_one_line_at_the_option(raw, expected):
    with pytest.raises(TaskError) as caught:
        check(raw)
    assert expected in str(caught.value) and "port_pairs" in str(caught.value)


def test_each_pair_its_own_rate_or_an_even_share():
    assert port_pairs.rates(Trial(64, 3000.0, 1.0), 3) == [1000.0] * 3
    isolated = Trial(64, 3000.0, 1.0, pair_rates_pps=(500.0, 2500.0))
    assert port_pairs.rates(isolated, 3) == [500.0, 2500.0, 0.0]


def plan(nsb_main, chains: int) -> dict:
    code, out, err = nsb_main("task", "start", str(CHAINS), "--dry-run", "--task-args",
                              json.dumps({"generator": "prox", "chains": chains}))
    assert code == 0, err
    return yaml.safe_load(out)["scenarios"][0]["traffic_generator"]["tg0"]


def test_the_chain_sample_gives_prox_a_gen_task_per_chain_and_a_lat_task_per_rx_port(nsb_main):
    generator = plan(nsb_main, 3)
    assert generator["options"]["port_pairs"] == [["xe0", "xe1"], ["xe2", "xe3"], ["xe4", "xe5"]]
    config = generator["prox_config"]
    assert re.findall(r"mode=gen\ntx port=(p\d)", config) == ["p0", "p2", "p4"]
    assert set(re.findall(r"mode=lat\nrx port=(p\d)", config)) == {f"p{n}" for n in range(6)}
    assert generator["command"][-1].endswith("/gen_chains-lab.cfg")  # no .j2 on the node


def test_a_template_error_in_a_prox_config_is_one_line(nsb_main, tmp_path):
    config = tmp_path / "gen.cfg.j2"
    config.write_text("[port 0]\nname=p0\n{% for x in ports %}\n[core 1]\n")
    task = tmp_path / "task.yaml"
    task.write_text(CHAINS.read_text().replace("../prox/configs/gen_chains-lab.cfg.j2",
                                               str(config)))
    code, _, err = nsb_main("task", "start", str(task), "--dry-run", "--task-args",
                            '{"generator": "prox"}')
    assert code == 2
    (line,) = err.strip().splitlines()
    assert f"{config}:3: template error" in line, line


def test_two_gen_tasks_on_one_core_is_one_line_at_the_second():
    from nsb.vnfs.prox import gen_cores
    config = prox_config.ProxConfig.parse(
        "[port 0]\nname=p0\n[port 1]\nname=p1\n[core 0]\nmode=master\n"
        "[core 1]\nmode=gen\ntx port=p0\n[core 2]\nmode=gen\ntx port=p1\n"
        "[core 1]\nmode=gen\ntx port=p1\n", "gen.cfg")
    with pytest.raises(TaskError) as caught:
        gen_cores.check_one_gen_task_per_core(config)
    assert str(caught.value).startswith("gen.cfg:13: [core 1]: a second mode=gen task on core 1 "
                                        "(the first is at line 7)"), str(caught.value)
