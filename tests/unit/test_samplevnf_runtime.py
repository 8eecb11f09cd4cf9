"""The SampleVNFs at run time without the binaries: their stats answers (as the real
ones print them) into NSB's KPIs, the CLI protocol on the pseudo-terminal, NSB's
correlated traffic counted where it returns, and the dry-run showing what each
VNF would get."""

from __future__ import annotations

import queue
import subprocess

import pytest

from nsb import plugins
from nsb.errors import RunError
from nsb.task import loader
from nsb.vnfs.samplevnf import stats
from nsb.vnfs.samplevnf.console import Console
from tests.unit.samplevnf_tasks import (
    ACL,
    CGNAPT,
    CORRELATED,
    UDP_REPLAY,
    VFW,
    plan,
    reference_copy,
)


@pytest.fixture
def ys(tmp_path):
    return reference_copy(tmp_path)


# answers as vFW, vACL, vCGNAPT and UDP_Replay (DPDK 17.05 builds) print them
VFW_STATS = """VFW Stats
{"VFW_counters" : {"id" : "PIPELINE4", " pkts_received": 1100, " pkts_fw_forwarded": 1100, \
" pkts_drop_fw": 0, " pkts_acl_forwarded": 1000, "pkts_drop_without_rule" : 100}}
VFW TOTAL: pkts_received: 1100, "pkts_fw_forwarded": 1100, "pkts_drop_fw": 0, "fw_drops" : \
{"TTL_zero" : 0, "bad_size" : 0, "fragmented_packet" : 0, "unsupported_packet_types" : 0, \
"no_arp_entry" : 3}, "pkts_acl_forwarded": 1000, "pkts_drop_without_rule": 100, \
"packets_last_sec" : 0, "bytes_processed ": 66000
Action ID: 00, packetCount: 0, byteCount: 0
Action ID: 01, packetCount: 1000, byteCount: 60000"""
ACL_STATS = """ACL Stats
acl entry[0] tpkts_processed: 547, pkts_drop: 46, pkts_received: 593, bytes_processed: 32820
ACL TOTAL: tpkts_processed: 547, pkts_drop: 46, pkts_received: 593, bytes_processed: 32820

CT TOTAL: ct_packets_forwarded: 0, ct_packets_dropped: 0

Action ID: 01, packetCount: 547, byteCount: 32820"""
CGNAPT_STATS = """CG-NAPT Packet Stats:
pipeline 3 stats:
Received 540,Missed 380,Dropped 380,Translated 160,ingress 0,egress 160
arpicmp pkts 0

Total pipeline stats:
Received 547,Missed 387,Dropped 387,Translated 160,ingress 0,egress 160
arpicmp pkts 0"""
REPLAY_STATS = """UDP_Replay stats:
--------------
    0           1000           1000                0                0             0
    1            300            299                1                0             0
"""


def test_stats_under_nsbs_names():
    assert stats.vfw(VFW_STATS) == {
        "packets_in": 1100.0, "packets_fwd": 1100.0, "packets_dropped": 0.0,
        "packets_acl_forwarded": 1000.0, "packets_dropped_without_rule": 100.0,
        "packets_dropped_no_arp": 3.0, "action0_packets": 0.0, "action1_packets": 1000.0}
    assert stats.acl(ACL_STATS) == {"packets_in": 593.0, "packets_fwd": 547.0,
                                    "packets_dropped": 46.0, "action1_packets": 547.0}
    # the totals, not the first pipeline's line
    assert stats.cgnapt(CGNAPT_STATS) == {
        "packets_in": 547.0, "packets_fwd": 160.0, "packets_dropped": 387.0,
        "packets_missed": 387.0, "packets_ingress": 0.0, "packets_egress": 160.0}
    assert stats.udp_replay(REPLAY_STATS) == {
        "packets_in": 1300.0, "packets_fwd": 1299.0, "packets_dropped": 1.0,
        "port0_rx_packets": 1000.0, "port0_tx_packets": 1000.0, "port0_dropped": 0.0,
        "port1_rx_packets": 300.0, "port1_tx_packets": 299.0, "port1_dropped": 1.0}


@pytest.mark.parametrize("parse", [stats.vfw, stats.acl, stats.cgnapt, stats.udp_replay])
def test_an_answer_without_totals_is_none(parse):
    assert parse("Command not found\n") is None


class FakeTerminal:
    """A process under script(1): what it prints when it reads each line."""

    def __init__(self, replies: dict[str, list[str]], first: list[str]):
        self.replies, self.lines, self.written = replies, queue.Queue(), []
        self.exited = False
        for line in first:
            self.lines.put(line)

    def write_line(self, line: str) -> None:
        self.written.append(line)
        for reply in self.replies.get(line, []):
            self.lines.put(reply)

    def read_line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=min(timeout, 0.05))
        except queue.Empty:
            if self.exited:
                raise EOFError("closed") from None
            raise subprocess.TimeoutExpired("fake", timeout) from None
        return line

    def wait(self, timeout=None):
        return 1

    def poll(self):
        return 1 if self.exited else None


def console_on(terminal: FakeTerminal, tmp_path) -> Console:
    console = Console(None, ["vFW"], "pipeline>", str(tmp_path / "vfw.log"), "vnf__0")
    console.process = terminal
    return console


def test_a_command_is_done_at_the_prompt_its_empty_line_brings(tmp_path):
    terminal = FakeTerminal({"p vfw stats": ["\x1b[2Kpipeline> p vfw stats\r", "VFW Stats",
                                             "VFW TOTAL: pkts_received: 5,"],
                             "": ["pipeline> "]},
                            first=["pipeline> [APP] Initializing PIPELINE1 ...", "noise"])
    console = console_on(terminal, tmp_path)
    console.wait_prompt(1.0)
    assert console.command("p vfw stats") == "VFW Stats\nVFW TOTAL: pkts_received: 5,"
    assert terminal.written == ["p vfw stats", ""]
    assert "VFW TOTAL" in (tmp_path / "vfw.log").read_text()  # the transcript


def test_no_prompt_asks_again_then_says_what_it_saw(tmp_path, monkeypatch):
    monkeypatch.setattr("nsb.vnfs.samplevnf.console.NUDGE_S", 0.1)
    terminal = FakeTerminal({}, first=["EAL: Detected 2 lcore(s)"])
    with pytest.raises(RunError, match=r"no 'pipeline>' prompt within 0.5 s.*\n.*"
                                       r"EAL: Detected 2 lcore"):
        console_on(terminal, tmp_path).wait_prompt(0.5)
    assert "" in terminal.written  # empty lines asked for a new prompt


def test_a_program_that_exits_is_its_last_lines(tmp_path):
    terminal = FakeTerminal({}, first=["LPM memory allocation failed"])
    terminal.exited = True
    with pytest.raises(RunError, match="vFW exited .*\nLPM memory allocation failed"):
        console_on(terminal, tmp_path).wait_prompt(5.0)


def test_correlated_trials_are_reflected_and_counted_where_they_left(ys):
    scenario = plan(ys / CORRELATED).scenarios[0]
    profile, gen = scenario.profile, scenario.generator
    trial = profile.trial(1000.0, profile.offered_packets(len(gen.ports)))
    assert trial.reflected and [p.name for p in trial.packets] == ["uplink_0"]
    assert [i.name for i in gen.ports] == ["xe0", "xe1"]  # xe1: NSB's vld to itself
    gen._sending, gen._reflected = [p for p in gen.paths if p.tx == 0], trial.reflected
    assert gen.tx_ports == gen.rx_ports == [0]


@pytest.mark.parametrize("task, files", [
    (VFW, ["vfw_config", "vfw_script"]), (ACL, ["acl_config", "acl_script"]),
    (CGNAPT, ["cgnapt_config", "cgnapt_script", "static translations"]),
    (UDP_REPLAY, []), (CORRELATED, ["vfw_config", "vfw_script"])])
def test_nsbs_trex_tasks_dry_run_on_their_pod_with_what_each_vnf_gets(nsb_main, ys, task,
                                                                       files):
    code, out, err = nsb_main("task", "start", "--dry-run", str(ys / task))
    assert code == 0, err
    for name in files:
        assert f"      {name}:" in out
    assert "[PIPELINE1]" in out or "UDP_Replay --log-level=5" in out
    assert "command: /opt/nsb_bin/" in out


def test_the_sut_classes_are_plugins_under_nsbs_names_and_short_ones():
    names = plugins.available("nsb.vnfs")
    for nsb_name, short in (("FWApproxVnf", "vfw"), ("AclApproxVnf", "vacl"),
                            ("CgnaptApproxVnf", "vcgnapt"),
                            ("UdpReplayApproxVnf", "udp_replay")):
        assert nsb_name in names and short in names
        assert nsb_name not in plugins.NSB_NAMES["nsb.vnfs"]


def test_loading_gives_vnfs_their_links_and_the_scenario_options(ys):
    (scenario,) = loader.load(ys / CORRELATED, {}).scenarios
    specs = {v.name: v for v in scenario.vnfs}
    assert dict(specs["vnf__0"].networks) == {"xe0": "uplink_0", "xe1": "downlink_0"}
    assert dict(specs["tg__1"].networks) == {"xe0": "downlink_0"}
    assert dict(specs["tg__0"].networks) == {"xe0": "uplink_0", "xe1": "uplink_1"}
    assert specs["vnf__0"].scenario_options["traffic_type"] == 4


def test_the_docs_rules_file_is_read_as_vfw_reads_it(tmp_path):
    """docs/how-to/samplevnf.md's rules file example: it parses, and its rule comes
    first, before NSB's default flows, with its priority."""
    from nsb.task.documents import Where
    from nsb.task.yaml_lines import parse
    from nsb.vnfs.samplevnf import rules
    from tests.doc_examples import ROOT
    from tests.doc_examples import parse as examples_of

    (block,) = [e for e in examples_of(ROOT / "docs" / "how-to" / "samplevnf.md")
                if e.kind == "checked-by" and "test_samplevnf_runtime.py" in e.note]
    path = tmp_path / "rules.yaml"
    path.write_text(block.text)
    where = Where(parse("rules: rules.yaml\n", str(tmp_path / "task.yaml")), ("rules",))
    flows = rules.read(path, where)
    assert flows.actions == ((1, ("drop", "count")),)
    assert flows.rules[0].command("vfw") == \
        "p vfw add 0 198.18.1.0 24 198.18.0.0 15 0 65535 5000 5999 0 0 1"


def test_events_signal_the_program_itself_by_its_pid():
    """pause and restart signal the SampleVNF's own process (``kill -N pid`` on its
    node), and it runs while ``kill -0`` finds it."""
    import signal as signals
    from types import SimpleNamespace

    from nsb.vnfs.samplevnf.vnf import Pid

    ran: list[list[str]] = []

    class Node:
        alive = True

        def run(self, argv, check=True, **_):
            ran.append(argv)
            return SimpleNamespace(returncode=0 if self.alive else 1, stdout="", stderr="")

    node = Node()
    pid = Pid(4242, node)
    pid.signal(signals.SIGSTOP)
    pid.signal(signals.SIGKILL)
    assert ran == [["kill", f"-{int(signals.SIGSTOP)}", "4242"], ["kill", "-9", "4242"]]
    assert pid.poll() is None
    node.alive = False
    assert pid.poll() == 0 and ran[-1] == ["kill", "-0", "4242"]
