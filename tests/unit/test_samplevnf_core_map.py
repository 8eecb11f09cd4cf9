"""CPU numbers written as a SampleVNF's core map (DPDK 17.05 ip_pipeline) names them."""

from __future__ import annotations

import pytest

from nsb.errors import RunError
from nsb.vnfs.samplevnf import core_map, pipeline_config

# what TOPOLOGY_SCRIPT prints: CPU, socket (physical package), core id
TWO_CORES = "0 0 0\n1 0 1\n"
VM_OF_TWO_SOCKETS = "0 0 0\n1 1 0\n"  # QEMU's -smp 2 (sockets=2): a core in each
# a two-socket Xeon: sparse core ids, hyperthreads numbered after every first thread
XEON = "".join(f"{cpu} {node} {core}\n" for cpu, (node, core) in enumerate(
    [(0, 0), (0, 1), (0, 8), (1, 0), (1, 1), (1, 8),
     (0, 0), (0, 1), (0, 8), (1, 0), (1, 1), (1, 8)]))


def test_a_cpu_is_named_by_node_core_rank_and_thread():
    assert core_map.names([0, 1], core_map.parse(TWO_CORES)) == {"0": "s0c0", "1": "s0c1"}
    # the VM's second CPU is the core of socket 1, not core 1 of socket 0
    assert core_map.names([0, 1], core_map.parse(VM_OF_TWO_SOCKETS)) == \
        {"0": "s0c0", "1": "s1c0"}
    xeon = core_map.parse(XEON)
    assert core_map.names([2, 3, 5, 8, 11], xeon) == {
        "2": "s0c2", "3": "s1c0", "5": "s1c2", "8": "s0c2h", "11": "s1c2h"}


def test_a_cpu_the_node_lacks_or_a_third_thread_is_one_line():
    with pytest.raises(RunError, match=r"CPU 4 is not one of the node's \(0, 1\)"):
        core_map.notation(4, core_map.parse(TWO_CORES))
    smt4 = core_map.parse("0 0 0\n1 0 0\n2 0 0\n3 0 0\n")
    with pytest.raises(RunError, match="CPU 2 is hyperthread 2"):
        core_map.notation(2, smt4)


def test_what_the_script_cannot_parse_is_left_out():
    assert core_map.parse("cat: cpu9/topology/core_id: No such file\n0 0 0\n") == {0: (0, 0)}


def test_the_config_s_cores_take_the_names():
    sections = [("PIPELINE0", (("type", "MASTER"), ("core", "0"))),
                ("PIPELINE1", (("type", "VFW"), ("core", "1"), ("pktq_in", "SWQ0"))),
                ("PIPELINE2", (("type", "VFW"), ("core", "0h")))]
    named = pipeline_config.named_cores(sections, {"0": "s0c0", "1": "s0c0h"})
    assert [dict(v)["core"] for _, v in named] == ["s0c0", "s0c0h", "s0c0h"]
    assert dict(named[1][1])["pktq_in"] == "SWQ0"
    with pytest.raises(RunError, match="CPU 1 is itself a second hyperthread"):
        pipeline_config.named_cores([("P", (("core", "1h"),))], {"1": "s0c0h"})
