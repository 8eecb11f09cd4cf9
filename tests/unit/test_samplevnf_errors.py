"""Bad input to the SampleVNFs is one located line before anything starts: a rules
file that does not parse, a vnf_config NSB would turn into no working pipeline, a
traffic_type it has no pipelines for, a binary that is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from nsb.executors.local import LocalExecutor
from tests.unit.samplevnf_tasks import ACL, CGNAPT, VFW, edit, plan_vnfs, reference_copy
from tests.unit.test_task_errors import check_one_line_error

RULES = "samples/vnf_samples/nsut/vfw/acl_1rule.yaml"


@pytest.fixture
def ys(tmp_path):
    return reference_copy(tmp_path)


def validate(nsb_main, task: Path, *fragments: str) -> str:
    return check_one_line_error(nsb_main("task", "validate", str(task)), *fragments)


@pytest.mark.parametrize("old, new, fragments", [
    ("actions: [drop,count]", "actions: [drop,count", ["acl_1rule.yaml:", "invalid YAML"]),
    ("actions: [drop,count]", "actions: [drop, bounce]",
     ["acl_1rule.yaml:17: access-list-entries[0].actions[1]: unknown action 'bounce'",
      "accept, drop, count, conntrack, connexist or {fwd|nat: {port: N}}"]),
    ("actions: [drop,count]", "actions: [{fwd: {to: 1}}]",
     ["acl_1rule.yaml:", "actions[0].fwd: 'fwd' needs {port: N}"]),
    ("destination-ipv4-network: 152.16.0.0/24", "destination-ipv4-network: 152.16.0.0/33",
     ["acl_1rule.yaml:19: access-list-entries[0].matches.destination-ipv4-network",
      "expected an IPv4 network (a.b.c.d/len), got '152.16.0.0/33'"]),
    ("lower-port: 0\n        upper-port: 65535\n      source-ipv4-network: 0.0.0.0/0",
     "lower-port: 70000\n        upper-port: 65535\n      source-ipv4-network: 0.0.0.0/0",
     ["access-list-entries[0].matches.destination-port-range.lower-port",
      "expected a port 0-65535, got 70000"]),
    ("lower-port: 0\n        upper-port: 65535\n      source-ipv4-network: 0.0.0.0/0",
     "lower-port: 9\n        upper-port: 1\n      source-ipv4-network: 0.0.0.0/0",
     ["destination-port-range: the range runs backwards (9-1)"]),
    ("    rule-name: rule1588\n", "      protocol: tcp\n    rule-name: rule1588\n",
     ["matches.protocol: expected a whole number 0-255, got 'tcp'"]),
    ("access-list-entries:", "access-list:", ["acl_1rule.yaml:", "access-list-entries"]),
])
def test_a_rules_file_that_does_not_parse(nsb_main, ys, old, new, fragments):
    edit(ys / RULES, old, new)
    validate(nsb_main, ys / VFW, *fragments)


def test_a_missing_rules_file_is_the_key_that_names_it(nsb_main, ys):
    edit(ys / VFW, "rules: acl_1rule.yaml", "rules: acl_2rules.yaml")
    validate(nsb_main, ys / VFW, "tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml:",
             "options.vnf__0.rules: rules file not found:", "acl_2rules.yaml")


@pytest.mark.parametrize("old, new, fragments", [
    ("lb_config: 'SW'", "lb_config: 'sw'",
     ["options.vnf__0.vnf_config.lb_config: expected SW (a load-balancer pipeline) or HW",
      "got 'sw'"]),
    ("lb_count: 1", "lb_count: 0", ["vnf_config.lb_count: expected a whole number 1-64"]),
    ("worker_threads: 1}", "worker_threads: '1'}",
     ["vnf_config.worker_threads: expected a whole number 1-64, got '1'"]),
    ("worker_config: '1C/1T'", "worker_config: '1C'",
     ["vnf_config.worker_config: expected '<cores>C/<threads>T'", "got '1C'"]),
    ("worker_config: '1C/1T'", "worker_config: '1C/2T'",
     ["vnf_config.worker_threads: with 2 threads per core NSB rounds worker_threads down",
      "1 leaves no worker"]),
    ("worker_threads: 1}", "worker_threads: 1, lb_cores: 2}",
     ["vnf_config.lb_cores: unknown key 'lb_cores'; NSB's vnf_config has lb_config, "
      "lb_count, worker_config, worker_threads, file"]),
    ("worker_threads: 1}", "worker_threads: 1, file: mine.cfg}",
     ["vnf_config.file: cannot read the pipeline config", "mine.cfg"]),
    ("    traffic_type: 4", "    traffic_type: 5",
     ["options.traffic_type: expected 4 or 6 (the IP version of NSB's SampleVNFs), got 5"]),
    ("      nfvi_enable: True", "      nfvi_enable: True\n      vnf_deploy: True",
     ["options.vnf__0.vnf_deploy"]),
])
def test_a_vnf_config_nsb_would_reject(nsb_main, ys, old, new, fragments):
    edit(ys / ACL, old, new)
    line = validate(nsb_main, ys / ACL, *fragments)
    assert "tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml:" in line


def test_cgnapt_napt_and_public_ip_are_checked(nsb_main, ys):
    edit(ys / CGNAPT, "      nfvi_enable: True", "      nfvi_enable: True\n      napt: nat")
    validate(nsb_main, ys / CGNAPT, "options.vnf__0.napt")


def test_a_missing_binary_is_one_preflight_line(ys):
    edit(ys / VFW, "      nfvi_enable: True", "      nfvi_enable: True\n"
         "      bin_path: /nonexistent/nsb_bin")
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    vfw.node.executor = LocalExecutor()
    problems = vfw.preflight({"online_cpus": "0-3", "mem_available_kb": 8 << 20})
    assert problems == ["vFW not found at /nonexistent/nsb_bin/vFW on vnf_0: set "
                        "options.bin_path (NSB's /opt/nsb_bin by default) or options.vnf_path; "
                        "the install_samplevnf role installs it (nsb ansible install POD "
                        "--archives FILE)"]


def test_cores_the_node_lacks_are_one_preflight_line(ys):
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    vfw.node.executor = LocalExecutor()
    problems = [p for p in vfw.preflight({"online_cpus": "0-1", "mem_available_kb": 8 << 20})
                if "CPU" in p]
    assert problems == ["vFW runs on CPUs 0,1,2,3 (NSB's layout); the node has no CPU 2,3 "
                        "(online: 0-1): set options.cores, e.g. [0, 1]"]
