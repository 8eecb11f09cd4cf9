"""Plan-time checks of an address-learning profile (RFC 2889) against its scenario: a
generator that sends address-learning trials, three distinct ports of its own
(learning, test, at least one monitor), and a DUT that learns addresses. Each is one
located line (exit 2); a DUT that does not learn makes the test not applicable."""

from __future__ import annotations

from nsb.errors import TaskError


def problems(scenario, generator, vnfs: list, profile) -> list[TaskError]:
    if not getattr(profile, "NEEDS_ADDRESSES", False):
        return []
    where = profile.spec.options_where
    if not generator.SENDS_ADDRESSES:
        return [where.error(f"'{profile.spec.type}' needs a generator that sends "
                            f"address-learning trials (trex does); '{generator.name}' "
                            f"({generator.spec.type}) does not", "type")]
    names = [iface.name for iface in generator.ports]
    learning, test, monitors = profile.ports(names)
    chosen = [("learning_port", learning), ("test_port", test),
              *(("monitor_ports", m) for m in monitors)]
    for key, name in chosen:
        if name not in names:
            return [where.error(f"{key}: '{name}' is none of {generator.name}'s ports "
                                f"({', '.join(names)})", key)]
    if not monitors or len({name for _, name in chosen}) != len(chosen):
        return [where.error(f"RFC 2889 needs three distinct ports of {generator.name}: "
                            f"learning, test and at least one monitor (it has "
                            f"{', '.join(names)}); give the generator a third and a fourth "
                            "port on the switch", "monitor_ports")]
    reasons = [f"{vnf.name}: {vnf.learns_addresses()}" for vnf in vnfs]
    if vnfs and all(r.split(": ", 1)[1] for r in reasons):
        return [where.error(f"not applicable: no DUT of scenario '{scenario.name}' learns "
                            f"addresses ({'; '.join(reasons)})", "type")]
    if not vnfs:
        return [where.error(f"not applicable: scenario '{scenario.name}' has no DUT that "
                            "learns addresses", "type")]
    longest = profile.longest_trial_s()
    for vnf in vnfs:
        ageing = None if vnf.learns_addresses() else vnf.address_ageing_s()
        if ageing is not None and longest >= ageing:
            return [where.error(
                f"a trial takes up to {longest:,.1f} s, no shorter than {vnf.name}'s ageing "
                f"time of {ageing:g} s: addresses learned first would age out before they "
                "are tested (lower max_addresses or raise the rates, or the switch's ageing "
                "time)", "max_addresses")]
    return []
