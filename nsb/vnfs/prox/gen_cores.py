"""PROX (22.12) names a gen task's flow table after its core ("A<core>_hash_gen_table",
handle_gen.c), so a second mode=gen task on one core panics at start: "Failed to set
up flow_id hash table for gen". A config with two is one line before anything starts."""

from __future__ import annotations

from nsb.vnfs.prox.config import ProxConfig, Section, _section_cores


def check_one_gen_task_per_core(config: ProxConfig) -> None:
    first: dict[int, Section] = {}
    for section in config.sections:
        if section.get("mode", "") != "gen":
            continue
        for core in _section_cores(section.name) or ():
            if core in first:
                raise config.error(
                    f"a second mode=gen task on core {core} (the first is at line "
                    f"{first[core].line}): PROX runs one gen task per core and exits at start "
                    "with two; give each its own core", section)
            first[core] = section
