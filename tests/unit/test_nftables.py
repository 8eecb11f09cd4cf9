"""The nftables VNF without a node: the rules each mode and limit makes, the user's
ruleset checked to be whole tables, nft's complaints placed on the task's line,
conntrack's and nft's output read as KPIs (their text as this machine's conntrack
1.4.7 and nft 1.0.6 print it), and its options' mistakes as one located line."""

from __future__ import annotations

from pathlib import Path

import pytest

from nsb import engine
from nsb.errors import RunError, TaskError
from nsb.nodes.node import Interface
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.vnfs.generic import conntrack, nftables_rules
from nsb.vnfs.generic.nftables_rules import RulePlan, RulesetError
from nsb.vnfs.generic.nftables_state import NftablesNode
from nsb.vnfs.generic.router import RouterVnf
from nsb.vnfs.generic.router_addresses import port_plan
from nsb.vnfs.generic.router_state import LinuxRouter
from tests.unit.test_task_errors import check_one_line_error

TASK_ID = "261206-000000-abcdef"
TABLE = "nsb_abcdef_fw0"
PORTS = ("xe0", "xe1", "xe2", "xe3")


# nsb's own rules

def test_nat_rewrites_the_source_on_each_server_port():
    text = nftables_rules.own_rules(RulePlan(TABLE, "nat", PORTS, ("xe0",),
                                             (("xe1", "10.0.1.2"), ("xe3", "2001:db8::2"))))
    assert text.startswith(f"table inet {TABLE} {{\n") and text.endswith("}\n")
    assert '    oifname "xe1" snat ip to 10.0.1.2\n' in text
    assert '    oifname "xe3" snat ip6 to 2001:db8::2\n' in text
    assert "type nat hook postrouting priority srcnat; policy accept;" in text
    assert "  counter new_packets {}\n" in text and "firewall_dropped" not in text
    assert "drop" not in text  # NAT filters nothing
    # what comes in by other ports (a pod's server forwarding for others) is not its own
    assert text.index('iifname != { "xe0", "xe1", "xe2", "xe3" } accept') < \
        text.index('counter name "new_packets"')


def test_firewall_passes_new_connections_only_from_the_client_side():
    one = nftables_rules.own_rules(RulePlan(TABLE, "firewall", PORTS, ("xe0",), ()))
    two = nftables_rules.own_rules(RulePlan(TABLE, "firewall", PORTS, ("xe0", "xe2"), ()))
    assert 'ct state new iifname != "xe0" counter name "firewall_dropped" drop' in one
    assert 'ct state new iifname != { "xe0", "xe2" } counter name "firewall_dropped" drop' in two
    assert 'ct state { invalid, untracked } counter name "firewall_dropped" drop' in one
    assert "policy accept" in one and "postrouting" not in one  # established pass


def test_limits_count_their_drops_after_the_firewall_and_custom_is_only_them():
    text = nftables_rules.own_rules(RulePlan(TABLE, "custom", PORTS, (), (), max_new_per_s=1000,
                                             max_sessions=50000))
    rules = [line.strip() for line in text.splitlines() if line.startswith("    ct")]
    assert rules == [
        'ct state new counter name "new_packets"',
        'ct state new limit rate over 1000/second burst 20 packets counter name '
        '"rate_limit_dropped" drop',
        'ct state new ct count over 50000 counter name "session_limit_dropped" drop']
    assert [line.split()[1] for line in text.splitlines() if "counter " in line
            and "{}" in line] == ["new_packets", "rate_limit_dropped", "session_limit_dropped"]
    firewall = nftables_rules.own_rules(RulePlan(TABLE, "firewall", PORTS, ("xe0",), (),
                                                 max_sessions=5))
    assert firewall.index("firewall_dropped\" drop") < firewall.index("ct count over 5")


def test_a_packet_limit_counts_every_packet_from_the_clients_and_only_theirs():
    text = nftables_rules.own_rules(RulePlan(TABLE, "nat", PORTS, ("xe0",), (), max_pps=50000))
    assert ('    iifname "xe0" limit rate over 50000/second burst 1000 packets counter name '
            '"pps_limit_dropped" drop') in text.splitlines()
    assert "  counter pps_limit_dropped {}" in text.splitlines()
    assert "pps_limit_dropped" not in nftables_rules.own_rules(RulePlan(TABLE, "nat", PORTS,
                                                                        ("xe0",), ()))


def test_table_names_are_nft_identifiers_of_the_run_and_the_vnf():
    assert nftables_rules.table_name(TASK_ID, "fw-0.a") == "nsb_abcdef_fw_0_a"


# the user's ruleset

def test_a_ruleset_of_whole_tables_names_them():
    text = """\
# the site's rules {not a block}
define CLIENTS = { 10.0.0.0/8 }
table inet fw {
  chain forward {  # a comment with a } brace
    type filter hook forward priority 10; policy accept;
    ip saddr != $CLIENTS counter comment "not ours }" drop
  }
}
table bridge br { chain c { type filter hook forward priority 0; } }; add table netdev \\
  ingress_only
table plain { }
"""
    assert nftables_rules.user_tables(text) == [("inet", "fw"), ("bridge", "br"),
                                                ("netdev", "ingress_only"), ("ip", "plain")]
    assert nftables_rules.user_tables("") == []


@pytest.mark.parametrize("text, line, fragment", [
    ("flush ruleset\ntable inet fw {}\n", 1, "'flush ruleset' would change what was on the node"),
    ("table inet fw {}\n\nadd rule inet filter forward drop\n", 3,
     "'add rule inet' is not a table: the ruleset holds whole tables"),
    ('table inet fw {\n}\ninclude "/etc/nftables.d/x.nft"\n', 3, "'include' reads a file"),
    ("table inet {\n}\n", 1, "a table without a name"),
    ("delete table inet fw\n", 1, "'delete table inet' would change"),
])
def test_a_ruleset_reaching_beyond_its_own_tables_is_refused_at_its_line(text, line, fragment):
    with pytest.raises(RulesetError) as refused:
        nftables_rules.user_tables(text)
    assert refused.value.line == line and fragment in str(refused.value)


# nft's complaints, as nft 1.0.6 prints them

SYNTAX = """\
/dev/stdin:4:21-21: Error: syntax error, unexpected newline, expecting to or ip or ip6
    tcp dport 22 fwd
                    ^
/dev/stdin:7:1-1: Error: syntax error, unexpected end of file
"""


def test_nfts_first_complaint_and_its_line():
    assert nftables_rules.complaint(SYNTAX) == (
        4, "syntax error, unexpected newline, expecting to or ip or ip6")
    assert nftables_rules.complaint("/dev/stdin:4:9-17: Error: Interface does not exist\n") == \
        (4, "Interface does not exist")
    assert nftables_rules.complaint("Error: Could not process rule: Operation not supported\n"
                                    "add rule inet t c ct count over 5\n") == \
        (None, "Could not process rule: Operation not supported")
    assert nftables_rules.complaint("") == (None, "no reason given")


# conntrack and nft output read as KPIs

# conntrack -S of this machine (conntrack 1.4.7), a few counts made non-zero
STATS = ("cpu=0   \tfound=3 invalid=2 insert=0 insert_failed=1 drop=1 early_drop=0 error=0 "
         "search_restart=7 clash_resolve=0 chaintoolong=0 \n"
         "cpu=1   \tfound=4 invalid=0 insert=0 insert_failed=5 drop=0 early_drop=2 error=0 "
         "search_restart=0 clash_resolve=1 chaintoolong=0 \n")


def test_conntrack_statistics_are_summed_over_cpus_whatever_fields_it_prints():
    kpis = conntrack.stats_kpis(STATS)
    assert kpis == {"conntrack_found": 7.0, "conntrack_invalid": 2.0, "conntrack_insert": 0.0,
                    "conntrack_insert_failed": 6.0, "conntrack_drop": 1.0,
                    "conntrack_early_drop": 2.0, "conntrack_error": 0.0,
                    "conntrack_search_restart": 7.0, "conntrack_clash_resolve": 1.0,
                    "conntrack_chaintoolong": 0.0}
    older = "cpu=0 entries=12 searched=40 found=3 new=9 invalid=0 ignore=1 delete=0\n"
    assert conntrack.stats_kpis(older)["conntrack_entries"] == 12.0
    assert conntrack.stats_kpis("") == {}


def test_conntrack_count_is_one_number():
    assert conntrack.count("5\n") == 5
    with pytest.raises(ValueError, match="printed 'conntrack v1.4.7"):
        conntrack.count("conntrack v1.4.7 (conntrack-tools): Operation failed\n")


def test_open_sessions_are_the_sum_of_conntrack_s_counts_of_each_listing():
    said = ("conntrack v1.4.7 (conntrack-tools): 1200 flow entries have been shown.\n"
            "conntrack v1.4.7 (conntrack-tools): 3 flow entries have been shown.\n")
    assert conntrack.shown(said) == 1203
    with pytest.raises(ValueError, match="not its count"):
        conntrack.shown("sh: 1: conntrack: not found\n")


# nft -j list counters, as nft 1.0.6 prints it
COUNTERS = (
    '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", '
    '"json_schema_version": 1}}, {"counter": {"family": "inet", "name": "new_packets", '
    '"table": "nsb_abcdef_fw0", "handle": 3, "packets": 12, "bytes": 720}}, {"counter": '
    '{"family": "inet", "name": "session_limit_dropped", "table": "nsb_abcdef_fw0", "handle": 4,'
    ' "packets": 7, "bytes": 420}}, {"counter": {"family": "inet", "name": "telnet", "table": '
    '"no_telnet", "handle": 2, "packets": 3, "bytes": 180}}, {"counter": {"family": "ip", '
    '"name": "other", "table": "someone_else", "handle": 2, "packets": 9, "bytes": 1}}]}')


def test_named_counters_are_kpis_ours_by_name_the_rulesets_by_table():
    assert conntrack.counter_kpis(COUNTERS, TABLE, [("inet", "no_telnet")]) == {
        "new_packets": 12.0, "session_limit_dropped": 7.0, "no_telnet.telnet": 3.0}
    with pytest.raises(ValueError, match="cannot parse"):
        conntrack.counter_kpis("Error: No such file", TABLE, [])


# giving back

def test_the_way_back_deletes_its_tables_and_puts_the_settings_back():
    node = NftablesNode(None, "", [("inet", TABLE), ("inet", "no_telnet")],
                        {"net.netfilter.nf_conntrack_udp_timeout": "11"})
    assert node.restore_steps() == []  # nothing loaded, nothing saved: nothing to undo
    node.saved = {"net.netfilter.nf_conntrack_udp_timeout": "30"}
    assert node.restore_script() == (
        f"nft delete table inet {TABLE} >/dev/null 2>&1\n"
        "nft delete table inet no_telnet >/dev/null 2>&1\n"
        "sysctl -qw net.netfilter.nf_conntrack_udp_timeout=30 >/dev/null 2>&1\n")


# at plan time

TASK = """\
schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {interfaces: {xe0: {ip: 10.64.1.1/24}, xe1: {ip: 10.64.2.1/24}}}
    sut: {interfaces: {xe0: {ip: 10.64.1.254/24}, xe1: {ip: 10.64.2.254/24}}}
  links: [[tg:xe0, sut:xe0], [sut:xe1, tg:xe1]]
scenarios:
  - name: stateful
    vnfs:
      - name: fw0
        type: nftables
        node: sut
        options:
          mode: nat
    traffic_generator: {name: tg0, type: trafgen, node: tg}
    traffic_profile: {type: fixed, packet_sizes: [64], duration: 1, rate_pps: 1000}
"""


def _task(tmp_path: Path, options: str = "") -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(TASK.replace("          mode: nat\n", options or "          mode: nat\n"))
    return path


def _vnf(path: Path):
    task = loader.load(path, {})
    plan = engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=path.parent,
                                     dry_run=True))
    return plan.scenarios[0].vnfs[0]


def test_the_plan_shows_the_whole_ruleset_and_it_keeps_state(tmp_path):
    (tmp_path / "site.nft").write_text("table inet site {\n  counter seen {}\n}\n")
    vnf = _vnf(_task(tmp_path, "          mode: nat\n          max_sessions: 9\n"
                               "          udp_timeout: 11\n          ruleset: site.nft\n"))
    shown = vnf.describe()
    assert shown["ruleset"].startswith(f"table inet {TABLE} {{")
    assert 'oifname "xe1" snat ip to 10.64.2.254' in shown["ruleset"]
    assert "ct count over 9" in shown["ruleset"]
    assert shown["ruleset"].endswith("}\n\ntable inet site {\n  counter seen {}\n}\n")
    assert shown["sysctls"] == {"net.netfilter.nf_conntrack_udp_timeout": "11"}
    assert (vnf.clients, vnf.servers) == (["xe0"], ["xe1"])
    assert vnf.KEEPS_STATE and not RouterVnf.KEEPS_STATE
    assert vnf.required_binaries() == ["ip", "sysctl", "nft", "conntrack"]
    assert vnf.collect_kpi() == {}  # not started


def test_ports_default_to_the_side_not_given(tmp_path):
    vnf = _vnf(_task(tmp_path, "          mode: firewall\n          server_ports: [xe0]\n"))
    assert (vnf.clients, vnf.servers) == (["xe1"], ["xe0"])


@pytest.mark.parametrize("options, fragments", [
    ("mode: nat\n          client_ports: [xe0, xe7]",
     ["task.yaml:16: scenarios[0].vnfs[0].options.client_ports[1]: 'xe7' is not one of the "
      "VNF's ports (xe0, xe1)"]),
    ("mode: nat\n          conntrack_max: 100000",
     ["options.conntrack_max: node sut is in a network namespace of its own",
      "bound the connections with max_sessions instead"]),
    ("mode: nat\n          client_ports: [xe0]\n          server_ports: [xe0, xe1]",
     ["options.server_ports: 'xe0' is a client port and a server port"]),
    ("mode: firewall\n          server_ports: [xe0, xe1]",
     ["options.client_ports: a firewall lets new connections in only from client ports"]),
    ("mode: nat\n          ruleset: |\n            table inet fw {\n            }\n"
     "            add rule inet filter forward drop",
     ["task.yaml:16: scenarios[0].vnfs[0].options.ruleset: line 3 of the ruleset: 'add rule "
      "inet' is not a table"]),
    ("mode: nat\n          ruleset: rules/none.nft",
     ["options.ruleset: the ruleset", "rules/none.nft: file not found"]),
    ("mode: stateful", ["options.mode: 'stateful' is not allowed; allowed: 'nat', 'firewall', "
                        "'custom'"]),
    ("max_sessions: 5", ["options: missing required key 'mode'"]),
])
def test_options_it_cannot_take_are_one_located_line(nsb_main, tmp_path, options, fragments):
    path = _task(tmp_path, f"          {options}\n")
    check_one_line_error(nsb_main("task", "validate", str(path)), *fragments)


def test_a_ruleset_file_nft_refuses_is_located_in_that_file(tmp_path):
    rules = tmp_path / "fw.nft"
    rules.write_text("table inet fw {\n  chain c {\n    type filter hook forward priority 0;\n"
                     "    tcp dport 22 fwd\n  }\n}\n")
    vnf = _vnf(_task(tmp_path, "          mode: nat\n          ruleset: fw.nft\n"))
    text = vnf.ruleset({"xe0": "xe0", "xe1": "xe1"})
    offset = len(text.splitlines()) - 6  # nsb's table and a blank line come first
    error = vnf._nft_error(text, SYNTAX.replace("/dev/stdin:4:", f"/dev/stdin:{offset + 4}:"))
    assert isinstance(error, TaskError) and str(error).endswith(
        "fw.nft:4: nft: syntax error, unexpected newline, expecting to or ip or ip6 (the "
        "ruleset of fw0, options.ruleset)")
    line = text.splitlines().index('    ct state new counter name "new_packets"') + 1
    ours = vnf._nft_error(text, f"/dev/stdin:{line}:5-30: Error: Could not process rule: No "
                                "such file or directory\n")
    assert isinstance(ours, RunError) and str(ours) == (
        "fw0: nft on sut refused nsb's rules: Could not process rule: No such file or directory "
        f'(line {line}: ct state new counter name "new_packets")')


# the router's ports that are NICs

def test_a_routers_nic_ports_are_counted_by_the_router_its_veths_by_the_context():
    nic = Interface("xe0", ip="10.0.0.2/24", pci="0000:05:00.0", peer_mac="02:00:00:00:00:0a",
                    peer_ip="10.0.0.1/24")
    veth = Interface("xe1", ip="10.0.1.2/24", peer_mac="02:00:00:00:00:0b",
                     peer_ip="10.0.1.1/24")
    router = RouterVnf.__new__(RouterVnf)
    router.interfaces = [nic, veth]
    router.router = LinuxRouter(None, [port_plan(nic, []), port_plan(veth, [])],
                                {"xe0": "ens785f0", "xe1": "xe1"})
    router._base = {"ens785f0": {"rx_packets": 100, "tx_packets": 50, "rx_dropped": 1,
                                 "tx_dropped": 0}}
    kpis = {"xe0.rx_packets": 10.0, "xe0.tx_packets": 7.0, "xe0.rx_dropped": 2.0,
            "xe0.tx_dropped": 0.0, "xe1.rx_packets": 7.0, "xe1.tx_packets": 10.0}
    [(name, count)] = router.port_counts(kpis).items()
    assert name == "xe0" and (count.rx, count.tx) == (110, 57)
    assert count.drops == {"rx_dropped": 3, "tx_dropped": 0}
