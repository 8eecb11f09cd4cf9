"""Every installed plugin keeps the contract nsb relies on: it loads, is the kind its
namespace asks for (and so a ``nsb.plugin.Plugin``), says in one line what it is
(``nsb plugin list``), its options schema is a valid JSON schema that says what it
does with unknown keys and whose defaults are valid options themselves, the options
nsb fills in validate again unchanged, and an instance built from them describes
itself (what ``--dry-run`` prints).

A plugin is built without a machine: contexts, runners, profiles and outputs from
their options alone, VNFs on a node of a two-node netns context that is never
deployed. Options a plugin requires come from ``REQUIRED_OPTIONS`` (nsb's own) or
from the schema's ``examples`` (a third party's); without either its instance is
not built, and the test says so in its output.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import jsonschema
import pytest
from stevedore import driver

from nsb import plugins
from nsb.contexts.base import Context
from nsb.outputs.base import Output
from nsb.plugin import Plugin
from nsb.runinfo import RunInfo
from nsb.runners.base import Runner
from nsb.task import yaml_lines
from nsb.task.documents import Where
from nsb.task.model import PluginSpec, Task, VnfSpec
from nsb.traffic_profiles.base import TrafficProfile
from nsb.vnfs.base import Vnf

BASES = {"nsb.contexts": Context, "nsb.vnfs": Vnf, "nsb.traffic_profiles": TrafficProfile,
         "nsb.runners": Runner, "nsb.outputs": Output}
INSTALLED = [(namespace, name) for namespace in BASES
             for name in plugins.available(namespace)]


SAMPLES = Path(__file__).resolve().parents[2] / "samples"
DATA = Path(__file__).resolve().parents[1] / "data"
HOSTS = DATA / "yardstick-samples" / "etc" / "yardstick" / "nodes" / "standalone"
IRQ_CONFIG = str(DATA / "prox-irq" / "irq.cfg")
PROX_CONFIG = str(SAMPLES / "libvirt" / "configs" / "handle_l2fwd-vm.cfg")
PROX_GEN_CONFIG = str(SAMPLES / "libvirt" / "configs" / "gen_l2fwd-lab.cfg")
POD = str(SAMPLES / "prox" / "pod.yaml")
_STANDALONE = {"servers": {"vnf_0": {"network_ports": {
    "mgmt": {"cidr": "10.0.0.2/24"}, "xe0": ["uplink_0"]}}},
    "networks": {"uplink_0": {"cidr": "152.16.100.10/24", "vpci": "0000:05:00.0",
                             "phy_port": "0000:18:00.0"}}}
# the options nsb's plugins cannot do without
REQUIRED_OPTIONS = {
    ("nsb.contexts", "Node"): {"file": POD},
    ("nsb.contexts", "baremetal"): {"file": POD},
    ("nsb.contexts", "StandaloneOvsDpdk"): {**_STANDALONE, "file": str(HOSTS / "host_ovs.yaml")},
    ("nsb.contexts", "StandaloneSriov"): {**_STANDALONE, "file": str(HOSTS / "host_sriov.yaml")},
    ("nsb.contexts", "netns"): {"nodes": {"vm0": {"interfaces": {"xe0": {}}}}},
    ("nsb.contexts", "libvirt"): {"vms": {"vm0": {"interfaces": {"xe0": {}}}}},
    ("nsb.vnfs", "prox"): {"prox_config": PROX_CONFIG},
    ("nsb.traffic_profiles", "fixed"): {"rate_pct": 50},
    ("nsb.traffic_profiles", "soak"): {"rate_pps": 1000},
    ("nsb.traffic_profiles", "reset_time"): {"rate_pps": 1000},
    ("nsb.traffic_profiles", "overload_recovery"): {"rate_pps": 1000},
    ("nsb.traffic_profiles", "reconfig"): {"rate_pps": 1000},
    ("nsb.traffic_profiles", "noisy_neighbour"): {"neighbour": {"cpus": "0"}},
    ("nsb.vnfs", "prox_tg"): {"prox_config": PROX_GEN_CONFIG},
    ("nsb.vnfs", "prox_irq"): {"prox_config": IRQ_CONFIG},
    ("nsb.vnfs", "prox_irq_gen"): {"prox_config": IRQ_CONFIG},
}
# VNFs run on sut, a vSwitch on sw (its bridge joins tg and sut)
_LAB = {"nodes": {"tg": {"interfaces": {"xe0": {}, "xe1": {}}},
                  "sut": {"interfaces": {"xe0": {}, "xe1": {}}},
                  "sw": {"bridges": ["br0"]}},
        "links": [{"ends": ["tg:xe0", "sut:xe0"], "via": "br0"}, ["sut:xe1", "tg:xe1"]]}
NODE_OF = {"ovs": "sw", "linux_bridge": "sw"}


def _properties(schema: dict):
    """(path, property schema) of every property, nested ones too."""
    for key, value in (schema.get("properties") or {}).items():
        yield (key,), value
        for path, inner in _properties(value if isinstance(value, dict) else {}):
            yield (key, *path), inner


def _run(tmp_path: Path) -> RunInfo:
    doc = yaml_lines.parse("schema: nsb:task:0.1\n", str(SAMPLES / "contract.yaml"))
    where = Where(doc, ())
    task = Task(file=SAMPLES / "contract.yaml", scenarios=(), outputs=(),
                context=PluginSpec(type="netns", options={}, where=where))
    return RunInfo("contract-0000", task, tmp_path / "contract-0000", dry_run=True)


def _instance(namespace: str, name: str, cls: type, tmp_path: Path):
    """The plugin built from nsb's filled-in options, as the plan builds it; None when
    it needs options nobody gave an example of."""
    schema = cls.OPTIONS_SCHEMA or {}
    given = copy.deepcopy(REQUIRED_OPTIONS.get((namespace, name))
                          or (schema.get("examples") or [{}])[0])
    if any(key not in given for key in schema.get("required", [])):
        return None
    doc = yaml_lines.parse("{}\n", "contract.yaml")
    run = _run(tmp_path)
    if namespace != "nsb.vnfs":
        spec = PluginSpec(type=name, options=given, where=Where(doc, ()))
        options = plugins.check_options(cls, spec)
        assert plugins.check_options(cls, PluginSpec(name, options, Where(doc, ()))) == options
        return cls(spec, options, run)
    from nsb.contexts.netns import NetnsContext

    context = NetnsContext(PluginSpec("netns", _LAB, Where(doc, ())), dict(_LAB), run)
    node = NODE_OF.get(name, "sut")
    spec = VnfSpec(type=name, options=given, where=Where(doc, ()), name="vnf0", node=node)
    options = plugins.check_options(cls, spec)
    assert plugins.check_options(cls, VnfSpec(name, options, Where(doc, ()), name="vnf0",
                                              node=node)) == options
    return cls(spec, options, context.nodes[node], context, run)


@pytest.mark.parametrize("namespace, name", INSTALLED, ids=[f"{n}:{p}" for n, p in INSTALLED])
def test_plugin_contract(namespace, name):
    cls = driver.DriverManager(namespace, name, invoke_on_load=False).driver
    assert isinstance(cls, type) and issubclass(cls, BASES[namespace]), cls
    assert issubclass(cls, Plugin), f"{name}: not a nsb.plugin.Plugin"
    summary = (cls.__doc__ or "").strip().splitlines()
    assert summary and summary[0].endswith("."), f"{name}: no one-line description"
    _check_schema(name, getattr(cls, "OPTIONS_SCHEMA", None))
    with tempfile.TemporaryDirectory() as scratch:  # also run outside pytest, on a package
        instance = _instance(namespace, name, cls, Path(scratch))
        if instance is None:
            print(f"{namespace}:{name}: requires options without an example; not built")
            return
        described = instance.describe()
    assert isinstance(described, dict) and described.get("type") == name, described


def _check_schema(name: str, schema: dict | None) -> None:
    if schema is None:
        return
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema.get("type") == "object"
    assert "additionalProperties" in schema, f"{name}: unknown options silently ignored?"
    for path, prop in _properties(schema):
        if isinstance(prop, dict) and "default" in prop:
            bare = {k: v for k, v in prop.items() if k != "default"}
            try:
                jsonschema.validate(prop["default"], bare)
            except jsonschema.ValidationError as exc:
                pytest.fail(f"{name}: the default of {'.'.join(path)} is not valid: "
                            f"{exc.message}")


def test_every_namespace_has_its_plugins():
    names = {namespace: set(plugins.available(namespace)) for namespace in BASES}
    assert {"netns", "baremetal", "libvirt", "StandaloneOvsDpdk"} <= names["nsb.contexts"]
    assert {"testpmd", "trafgen", "prox", "ovs", "prox_tg"} <= names["nsb.vnfs"]
    assert {"binsearch", "mlrsearch", "fastndr"} <= names["nsb.traffic_profiles"]
