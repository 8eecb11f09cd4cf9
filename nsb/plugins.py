"""Plugin lookup through stevedore entry points.

A third party adds a context, VNF, generator, profile, runner or output by
installing a package that declares an entry point in one of NAMESPACES.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from importlib.metadata import entry_points

from nsb.task.model import PluginSpec
from nsb.task.schema import validate

NAMESPACES = {
    "nsb.contexts": "context",
    "nsb.vnfs": "VNF",
    "nsb.traffic_profiles": "traffic profile",
    "nsb.runners": "runner",
    "nsb.outputs": "output",
}


# NSB's context types that nsb has no plugin for, with what each provides
NSB_CONTEXTS = {
    "Heat": "OpenStack Heat",
    "Dummy": "Yardstick's dummy context",
}
# Yardstick/NSB's own names that nsb has no plugin for: a task asking for one gets
# "not supported yet", never a did-you-mean that presents it as a typo
NSB_NAMES = {
    "nsb.runners": {"Arithmetic", "Sequence", "Constant",
                    "Dynamictp", "SearchRunner"},
    "nsb.traffic_profiles": {
        "ProxMplsTagUntagProfile",
        "ProxProfile", "TrexProfile",
        "IXIARFC2544Profile", "IxiaRFC2544Profile", "IXIARFC2544PppoeScenarioProfile",
        "IxiaBasicProfile", "IxiaPppoeClientProfile", "VpeRFC2544Profile", "LandslideProfile",
        "SippProfile", "VppRFC2544Profile", "TrafficProfileGenericHTTP", "IperfProfile",
    },
    "nsb.vnfs": {
        "IxiaTrafficGen", "IxLoadTrafficGen",
        "ProxAclVnf", "VpeApproxVnf", "VfwApproxVnf", "PingTrafficGen",
        "IxiaResourceHelper", "LandslideTrafficGen", "SippVnf", "VcmtsVNF", "VppRFC2544Vnf",
        "IperfTrafficGen", "EPCVnf", "TrexTrafficGenVcmts", "AgentVnf",
    },
    "nsb.contexts": set(NSB_CONTEXTS),
}


@dataclass(frozen=True)
class PluginInfo:
    namespace: str
    name: str
    target: str
    summary: str


def available(namespace: str) -> list[str]:
    """Installed plugin names in ``namespace`` (without importing them)."""
    return sorted({ep.name for ep in entry_points(group=namespace)})


def load_class(namespace: str, spec: PluginSpec) -> type:
    """The class registered as ``spec.type``; unknown names list what exists."""
    from stevedore import driver

    names = available(namespace)
    if spec.type in names:
        return driver.DriverManager(namespace, spec.type, invoke_on_load=False).driver
    if spec.type in NSB_NAMES.get(namespace, ()):
        raise spec.type_error(f"not supported yet: NSB {NAMESPACES[namespace]} "
                              f"'{spec.type}'; nsb has: {', '.join(names) or 'none'}")
    close = difflib.get_close_matches(spec.type, names, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise spec.type_error(f"unknown {NAMESPACES[namespace]} plugin '{spec.type}'{hint}; "
                          f"installed: {', '.join(names) or 'none'}")


def check_options(plugin_class: type, spec: PluginSpec) -> dict:
    """Validate ``spec.options`` against the plugin's OPTIONS_SCHEMA (earlier and NSB
    names of an option read as its name: nsb.task.option_aliases); fill its defaults."""
    from nsb.task import option_aliases

    options_schema = getattr(plugin_class, "OPTIONS_SCHEMA", None)
    options = dict(spec.options or {})
    if options_schema:
        where = spec.options_where
        validate(options, option_aliases.accepting(options_schema, options), where.doc,
                 where.path)
        options = option_aliases.canonical(options, options_schema, where)
        for key, prop in options_schema.get("properties", {}).items():
            if key not in options and "default" in prop:
                options[key] = prop["default"]
    return options


def generator_names() -> list[str]:
    """Installed VNF plugins that are traffic generators (broken plugins are left out)."""
    return [name for name, _ in _generators()]


def mix_generator_names() -> list[str]:
    """Installed generators that can send a frame mix (IMIX)."""
    return [name for name, cls in _generators() if cls.SENDS_FRAME_MIX]


def burst_generator_names() -> list[str]:
    """Installed generators that can send an exact burst (back-to-back)."""
    return [name for name, cls in _generators() if cls.SENDS_BURSTS]


def session_generator_names() -> list[str]:
    """Installed generators that open connections (stateful trials)."""
    return [name for name, cls in _generators() if getattr(cls, "SENDS_SESSIONS", False)]


def session_profile_names() -> list[str]:
    """Installed traffic profiles that open connections."""
    from stevedore import driver

    found = []
    for name in available("nsb.traffic_profiles"):
        try:
            cls = driver.DriverManager("nsb.traffic_profiles", name, invoke_on_load=False).driver
        except Exception:  # a broken third-party plugin must not hide the real error
            continue
        if getattr(cls, "NEEDS_SESSIONS", False):
            found.append(name)
    return found


def _generators() -> list[tuple[str, type]]:
    from stevedore import driver

    from nsb.vnfs.base import TrafficGen

    found = []
    for name in available("nsb.vnfs"):
        try:
            cls = driver.DriverManager("nsb.vnfs", name, invoke_on_load=False).driver
        except Exception:  # a broken third-party plugin must not hide the real error
            continue
        if isinstance(cls, type) and issubclass(cls, TrafficGen):
            found.append((name, cls))
    return found


def describe_all(namespace: str | None = None) -> list[PluginInfo]:
    """Every installed plugin with the first line of its docstring."""
    from stevedore import ExtensionManager

    infos = []
    for ns in ([namespace] if namespace else NAMESPACES):
        manager = ExtensionManager(ns, invoke_on_load=False,
                                   on_load_failure_callback=_report_broken)
        for ext in sorted(manager, key=lambda e: e.name.lower()):
            doc = (ext.plugin.__doc__ or "").strip().splitlines()
            infos.append(PluginInfo(ns, ext.name, ext.entry_point.value,
                                    doc[0] if doc else "(no description)"))
    return infos


def _report_broken(manager, entrypoint, exception) -> None:
    import logging

    logging.getLogger(__name__).warning("plugin %s in %s fails to load: %s",
                                        entrypoint.name, manager.namespace, exception)
