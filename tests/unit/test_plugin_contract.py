"""Every installed plugin keeps the contract nsb relies on: it loads, is the kind its
namespace asks for, says in one line what it is (``nsb plugin list``), and its
options schema is a valid JSON schema that says what it does with unknown keys and
whose defaults are valid options themselves."""

from __future__ import annotations

import jsonschema
import pytest
from stevedore import driver

from nsb import plugins
from nsb.contexts.base import Context
from nsb.outputs.base import Output
from nsb.runners.base import Runner
from nsb.traffic_profiles.base import TrafficProfile
from nsb.vnfs.base import Vnf

BASES = {"nsb.contexts": Context, "nsb.vnfs": Vnf, "nsb.traffic_profiles": TrafficProfile,
         "nsb.runners": Runner, "nsb.outputs": Output}
INSTALLED = [(namespace, name) for namespace in BASES
             for name in plugins.available(namespace)]


def _properties(schema: dict):
    """(path, property schema) of every property, nested ones too."""
    for key, value in (schema.get("properties") or {}).items():
        yield (key,), value
        for path, inner in _properties(value if isinstance(value, dict) else {}):
            yield (key, *path), inner


@pytest.mark.parametrize("namespace, name", INSTALLED, ids=[f"{n}:{p}" for n, p in INSTALLED])
def test_plugin_contract(namespace, name):
    cls = driver.DriverManager(namespace, name, invoke_on_load=False).driver
    assert isinstance(cls, type) and issubclass(cls, BASES[namespace]), cls
    summary = (cls.__doc__ or "").strip().splitlines()
    assert summary and summary[0].endswith("."), f"{name}: no one-line description"
    schema = getattr(cls, "OPTIONS_SCHEMA", None)
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
