"""RFC 2889 in the lab, for real: TRex's four ports on Open vSwitch (NORMAL) with a
table size set from outside, and on a Linux bridge. The capacity found is the table's
size, to the address; in every trial the addresses TRex's monitor ports saw flooded are
the ones the switch's own table lacked; nothing is left behind. A switch that does not
learn is not applicable, in one line."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLE = ROOT / "samples" / "vswitch" / "tc_ovs_mac_learning.yaml"


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


def _run(results_conf, tmp_path, args: dict) -> dict:
    proc = start(results_conf, args, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert leftovers(task_id) == []
    return doc


def _witnessed(doc, size: int | None) -> None:
    """Every trial: every frame sent arrived, and the addresses flooded are exactly those
    missing from the switch's own table (which holds the test port's address too)."""
    for trial in doc["trials"]:
        a = trial["addresses"]
        assert a["learning_sent"] == a["learning_delivered"] == a["count"], a
        assert a["test_sent"] == a["test_delivered"] == a["count"], a
        assert a["learning_flooded"] == 0, a
        assert a["flooded"] == a["count"] - a["table_learnt"], a
        assert a["table_entries"] == a["table_learnt"] + 1, a
        if size is not None:
            assert a["table_entries"] == min(a["count"] + 1, size), a
        assert (trial["verdict"] == "pass") == (a["flooded"] == 0), trial["reason"]


@pytest.mark.parametrize("size", [150])
def test_ovs_s_capacity_is_its_table_size_and_its_table_agrees(results_conf, tmp_path, size):
    doc = _run(results_conf, tmp_path, {"mac_table_size": size, "max_addresses": 512,
                                        "max_learning_pps": 20000})
    (result,) = doc["results"]
    m = result["mac_learning"]
    assert m["mac_capacity"] == size == m["table_max"], m
    assert m["learned_addresses"] == size - 1 and m["first_failing_addresses"] == size
    _witnessed(doc, size)
    # the learning rate: at half the capacity, a rate at which a trial held them all
    rated = doc["trials"][m["learning_rate_trial_index"]]
    assert rated["verdict"] == "pass" and rated["addresses"]["count"] == m["rate_addresses"]
    assert rated["addresses"]["learning_pps"] == m["learning_rate_pps"]


def test_a_linux_bridge_holds_every_address_up_to_the_search_s_bound(results_conf, tmp_path):
    doc = _run(results_conf, tmp_path, {"dut": "linux_bridge", "max_addresses": 1024,
                                        "find": ["capacity"]})
    (result,) = doc["results"]
    assert result["limited_by"] == "upper_bound"
    assert result["mac_learning"]["learned_addresses"] == 1024
    _witnessed(doc, None)


def test_a_switch_that_does_not_learn_is_not_applicable(results_conf):
    proc = start(results_conf, {"ovs_flows": "port"}, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2
    (line,) = err.strip().splitlines()
    assert "tc_ovs_mac_learning.yaml" in line and "not applicable" in line and "ovs0" in line
    # docs/how-to/mac-learning.md shows this line as it is (but the path)
    shown = (ROOT / "docs" / "how-to" / "mac-learning.md").read_text()
    assert line.split(".yaml:", 1)[1] in shown


@pytest.mark.slow  # 40 s: the lab's capacity test above is in make test
def test_ovs_s_capacity_on_an_ssh_pod(results_conf, tmp_path):
    """The sample on a pod over SSH: TRex's four ports on the generator server, cabled to
    the switch server's, where OVS (its userspace datapath) switches them on br0; the
    capacity is its table size, witnessed by its table read over SSH, and nothing of the
    run is left on either server."""
    from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb

    size = 100
    with lab_pod(tmp_path, names=("tg", "host"), ports=("xe0", "xe1", "xe2", "xe3"),
                 switch="br0") as (pod, nodes):
        doc = _run(results_conf, tmp_path, {
            "pod": str(pod), "trex_path": str(ROOT.parent / "shared" / "tools" / "trex"),
            "mac_table_size": size, "max_addresses": 256, "find": ["capacity"]})
        for node in nodes.values():
            assert started_by_nsb(node, ("ovs-vswitchd", "ovsdb-server", "t-rex-64")) == []
        assert nodes["sut"].ns("ip", "link", "show", "br0", check=False).returncode != 0
    assert doc["plan"]["context"]["type"] in ("Node", "baremetal")
    (result,) = doc["results"]
    assert result["mac_learning"]["mac_capacity"] == size, result["mac_learning"]
    _witnessed(doc, size)
