"""A stateful scenario's plugins checked against each other before anything starts:
a profile that opens connections needs a generator that does (and the other way
round), the generator must be able to run the profile's program (a TRex ASTF profile
file that loads, with its tunables), and every DUT must be able to forget its state
before each trial (or the profile must say it measures without that). Each is one
located line, exit 2."""

from __future__ import annotations

from nsb import plugins
from nsb.errors import TaskError


def problems(scenario, generator, vnfs: list, profile) -> list[TaskError]:
    opens = bool(getattr(profile, "NEEDS_SESSIONS", False))
    sends = bool(getattr(generator, "SENDS_SESSIONS", False))
    if opens and not sends:
        return [scenario.generator.type_error(
            f"profile '{scenario.profile.type}' opens connections: generator "
            f"'{scenario.generator.type}' sends frames; generators that open connections: "
            f"{', '.join(plugins.session_generator_names())}")]
    if sends and not opens:
        return [scenario.profile.type_error(
            f"generator '{scenario.generator.type}' opens connections: profile "
            f"'{scenario.profile.type}' sends frames; profiles that open connections: "
            f"{', '.join(plugins.session_profile_names())}")]
    if not opens:
        return []
    return [*_program(scenario, generator, profile), *_resettable(scenario, vnfs, profile)]


def _program(scenario, generator, profile) -> list[TaskError]:
    from nsb.traffic_profiles.stateful import common

    why = generator.check_sessions(common.session_load(profile, 1.0))
    if not why:
        return []
    key = "tunables" if "tunable" in why or "argument" in why else "program"
    return [scenario.profile.options_where.error(why, key)]


def _resettable(scenario, vnfs: list, profile) -> list[TaskError]:
    """A DUT that may keep state nsb cannot reset would hand each trial the last one's
    sessions."""
    if not profile.options.get("reset_state", True):
        return []
    errors = []
    for vnf, spec in zip(vnfs, scenario.vnfs, strict=True):
        if vnf.KEEPS_STATE is None:
            errors.append(spec.options_where.error(
                f"'{vnf.name}' ({spec.type}) may keep state nsb cannot reset before each "
                f"trial of '{scenario.profile.type}' (a trial would inherit the last one's "
                "sessions): use a DUT nsb resets (nftables), or set the profile's "
                "reset_state: false to measure it as it is"))
    return errors
