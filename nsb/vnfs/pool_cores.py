"""A VNF's lcores from the CPUs a pool gave it (a chain template's ``cores``), written
the way its type lists them: testpmd's lcores name its main lcore, which does not
forward, before the forwarding ones; l3fwd's and l2fwd's are all forwarding."""

from __future__ import annotations

from dataclasses import replace

from nsb.task.model import VnfSpec


def applied(cls: type, spec: VnfSpec) -> VnfSpec:
    """``spec`` with ``cores`` and ``lcores`` set from its ``pool_cores``."""
    properties = (cls.OPTIONS_SCHEMA or {}).get("properties", {})
    if "lcores" not in properties:
        raise spec.where.error(f"{spec.type} takes no lcores: cores from a chain "
                               "template's pool need a DPDK app that does (testpmd, l3fwd, "
                               "l2fwd)", "type")
    cpus = spec.pool_cores["cpus"].split(",")
    lcores = [str(spec.pool_cores.get("main", 0))] if getattr(cls, "MAIN_LCORE", False) \
        else []
    lcores += [c for c in cpus if c not in lcores]
    return replace(spec, options={**spec.options, "cores": len(cpus),
                                  "lcores": ",".join(lcores)})
