"""Events a trial performs on a VNF while its traffic runs: what each is, the option that
names one in a profile, the check at plan time that the VNF can perform it (one located
line), and the act itself, timed against the trial's traffic."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from nsb.errors import TaskError

EVENTS = {
    "pause": "the VNF's processes stopped (SIGSTOP) for pause_ms, then continued (SIGCONT): "
             "an outage of known length, nothing restarted",
    "command": "a shell command run on the VNF's node (in its namespace): the event lasts "
               "until it returns (a rule changed and changed back, a link set down and up)",
    "restart": "the VNF's processes ended by signal (TERM: a planned restart, KILL: a "
               "crash), then started again as at setup (OVS with its flows); the event "
               "lasts until it is ready again",
    "link_flap": "one of the VNF's node's interfaces (interface; default its first) set "
                 "down for down_ms, then up again: a cable pulled and put back",
    "rule_churn": "nftables (an ACL set's entries) and Open vSwitch (OpenFlow flows): rules "
                  "installed first (rules_installed, before the traffic), then "
                  "changes_per_s of them added and removed for churn_s seconds; none "
                  "matches the traffic",
}

SCHEMA = {
    "description": "what happens to the DUT at at_s: type (" + ", ".join(EVENTS) +
                   "), vnf (its name; default: the scenario's first VNF), pause_ms (a "
                   "pause's length), signal (a restart's: TERM or KILL), interface and "
                   "down_ms (a link flap's), command (a "
                   "command's shell text), rules_installed, changes_per_s and churn_s (a "
                   "rule churn's)",
    "type": "object",
    "additionalProperties": False,
    "required": ["type"],
    "properties": {
        "type": {"enum": list(EVENTS)},
        "vnf": {"type": "string", "minLength": 1},
        "pause_ms": {"type": "number", "exclusiveMinimum": 0, "default": 500},
        "signal": {"enum": ["TERM", "KILL"], "default": "TERM"},
        "interface": {"type": "string", "minLength": 1},
        "down_ms": {"type": "number", "exclusiveMinimum": 0, "default": 500},
        "command": {"type": "string", "minLength": 1},
        "rules_installed": {"type": "integer", "minimum": 0, "default": 1000},
        "changes_per_s": {"type": "number", "exclusiveMinimum": 0, "default": 100},
        "churn_s": {"type": "number", "exclusiveMinimum": 0, "default": 2},
        "at_s": {"description": "seconds into the trial's traffic", "type": "number",
                 "exclusiveMinimum": 0},
    },
}


@dataclass(frozen=True)
class Happened:
    """When an event started and ended, in seconds since the trial's traffic started."""

    type: str
    vnf: str
    start_s: float
    end_s: float
    error: str = ""  # the act failed: what it said


def problems(scenario, vnfs: list, profile) -> list[TaskError]:
    """The event a profile names, against the scenario's VNFs: one that is not there or
    cannot perform it is one located line."""
    event = (profile.options or {}).get("event")
    if not isinstance(event, dict):
        return []
    where = profile.spec.options_where
    if not vnfs:
        return [where.error("the event needs a VNF to act on: the scenario has none",
                            "event")]
    name = event.get("vnf", vnfs[0].name)
    vnf = next((v for v in vnfs if v.name == name), None)
    if vnf is None:
        return [where.error(f"event.vnf '{name}' is none of the scenario's VNFs "
                            f"({', '.join(v.name for v in vnfs)})", "event")]
    if event["type"] == "command" and not event.get("command"):
        return [where.error("a 'command' event needs its command (event.command: shell "
                            "text run on the VNF's node)", "event")]
    if event["type"] == "link_flap" and event.get("interface") and \
            event["interface"] not in vnf.event_interfaces():
        return [where.error(f"event.interface '{event['interface']}' is none of {name}'s "
                            f"interfaces ({', '.join(vnf.event_interfaces()) or 'none'})",
                            "event")]
    if event["type"] not in vnf.EVENTS:
        can = ", ".join(vnf.EVENTS) or "no event"
        return [where.error(f"'{name}' ({vnf.spec.type}) cannot perform a "
                            f"'{event['type']}' event (it can: {can})", "event")]
    return []


def target(vnfs: list, event: dict):
    """The VNF an event acts on."""
    name = event.get("vnf", vnfs[0].name if vnfs else "")
    return next(v for v in vnfs if v.name == name)


class Scheduled:
    """An event performed on its own thread at ``at_s`` into a trial's traffic; the
    traffic's start is read from the generator (``traffic_started``, monotonic)."""

    def __init__(self, act: Callable[[], None], event: dict, at_s: float,
                 traffic_started: Callable[[], float | None]):
        self.act, self.event, self.at_s = act, event, at_s
        self.traffic_started = traffic_started
        self.happened: Happened | None = None
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nsb-event", daemon=True)

    def __enter__(self) -> Scheduled:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._cancel.set()
        self._thread.join()

    def _run(self) -> None:
        armed, started = time.monotonic(), None
        while started is None or started < armed:  # this trial's, not the last one's
            if self._cancel.wait(0.005):
                return
            started = self.traffic_started()
        if self._cancel.wait(max(0.0, started + self.at_s - time.monotonic())):
            return
        begin = time.monotonic()
        error = ""
        try:
            self.act()
        except Exception as exc:  # noqa: BLE001  (said in the trial's reason)
            error = str(exc)
        self.happened = Happened(self.event["type"], self.event.get("vnf", ""),
                                 begin - started, time.monotonic() - started, error)
