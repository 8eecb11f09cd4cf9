"""The ``nftables`` VNF: a stateful DUT made of the node's Linux kernel. The router's
forwarding plus an nftables ruleset and connection tracking: NAT (the server side's
address as every connection's source), a stateful firewall, or the task's own
ruleset, with limits on new connections per second and on concurrent connections.

It keeps state, and owns it: before a stateful trial ``reset_state`` empties the
conntrack table, while it runs ``session_count`` is conntrack's own count (of the
sessions open, for a trial that holds them), the trial's witness. Everything it
changes is given back at teardown (its tables deleted, the conntrack settings as
they were); on a pod's server the way back is written in the node's ledger first, as
the router's is.
"""

from __future__ import annotations

import logging
from pathlib import Path

from nsb.errors import RunError, TaskError
from nsb.nodes import node_ledger, node_leftovers
from nsb.task import input_file
from nsb.vnfs.generic import conntrack, nftables_churn, nftables_rules
from nsb.vnfs.generic.nftables_rules import RulePlan, RulesetError
from nsb.vnfs.generic.nftables_state import NftablesNode
from nsb.vnfs.generic.router import RouterVnf
from nsb.vnfs.generic.router_state import kernel_names
from nsb.vnfs.rule_churn import RuleChurn

LOG = logging.getLogger(__name__)

_PORTS = {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True}
_SECONDS = {"type": "integer", "minimum": 1, "maximum": 2**31 - 1}
_ROUTER = RouterVnf.OPTIONS_SCHEMA["properties"]


class NftablesVnf(RuleChurn, RouterVnf):
    """Linux forwarding with nftables and conntrack: NAT, stateful firewall or own rules.

    The router's forwarding, plus nsb's table for the mode and the connection limits,
    then the task's ruleset; a DUT that keeps state (conntrack's table)."""

    KEEPS_STATE = True
    EVENTS = ("command", "link_flap", "rule_churn")  # nsb.vnf_events; rule_churn: nftables_churn
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["mode"],
        "properties": {
            "interfaces": _ROUTER["interfaces"],
            "generator_addresses": _ROUTER["generator_addresses"],
            "mode": {"description": "nat: the source of what leaves a server-side port becomes "
                                    "that port's address (SNAT); firewall: established and "
                                    "related pass, new connections only from the client side, "
                                    "the rest is dropped; custom: only the ruleset",
                     "enum": list(nftables_rules.MODES)},
            "ruleset": {"description": "nft text (inline, or a file relative to the task file) "
                                       "of whole tables, loaded with nsb's table in one "
                                       "transaction and deleted at teardown",
                        "type": "string", "minLength": 1},
            "client_ports": {"description": "the ports facing the clients (default: the first "
                                            "of each pair of ports, or those that are not "
                                            "server_ports)", **_PORTS},
            "server_ports": {"description": "the ports facing the servers (default: the ports "
                                            "that are not client_ports)", **_PORTS},
            "max_new_per_s": {"description": "new connections per second let through (nft "
                                             "'limit rate over', 5 of burst); the rest is "
                                             "dropped and counted as rate_limit_dropped",
                              "type": "integer", "minimum": 1, "maximum": 2**32 - 1},
            "max_sessions": {"description": "concurrent connections let through (nft 'ct "
                                            "count over'); new ones over it are dropped and "
                                            "counted as session_limit_dropped",
                             "type": "integer", "minimum": 1, "maximum": 2**32 - 1},
            "max_pps": {"description": "packets per second let through from the client side, "
                                       "new connections or not (nft 'limit rate over'); the "
                                       "rest is dropped and counted as pps_limit_dropped: a "
                                       "DUT of known capacity for stateful_throughput",
                        "type": "integer", "minimum": 1, "maximum": 2**32 - 1},
            "conntrack_max": {"description": "net.netfilter.nf_conntrack_max for the run (only "
                                             "a node's initial network namespace takes it)",
                              "type": "integer", "minimum": 1, "maximum": 2**31 - 1},
            **{name: {"description": f"{key} for the run, in seconds", **_SECONDS}
               for name, key in conntrack.TIMEOUTS.items()},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        self.clients, self.servers = _sides(options, [i.name for i in self.interfaces],
                                            where)
        if "conntrack_max" in options and context.spec.type == "netns":
            raise where.error(_NO_MAX.format(node=node.name), "conntrack_max")
        self.user_rules, self.ruleset_file = _user_ruleset(options.get("ruleset"), run, where)
        self.table = nftables_rules.table_name(run.task_id, self.name)
        try:
            self.user_tables = nftables_rules.user_tables(self.user_rules)
        except RulesetError as exc:
            raise self._ruleset_error(exc.line, str(exc)) from None
        if ("inet", self.table) in self.user_tables:
            raise where.error(f"the ruleset makes table inet {self.table}, which is nsb's "
                              "own: name yours apart", "ruleset")
        self.settings = {key: str(options[name]) for name, key in conntrack.TIMEOUTS.items()
                         if name in options}
        if "conntrack_max" in options:
            self.settings[conntrack.MAX_SYSCTL] = str(options["conntrack_max"])
        self.nft: NftablesNode | None = None
        self._nft_undo: node_ledger.Record | None = None

    def required_binaries(self) -> list[str]:
        return ["ip", "sysctl", "nft", "conntrack"]

    def describe(self) -> dict:
        info = super().describe()
        info["ruleset"] = self.ruleset({i.name: i.name for i in self.interfaces})
        if self.settings:
            info["sysctls"] = dict(self.settings)
        info["sessions"] = ("conntrack -C: every entry of the node's network namespace "
                            "(in the lab only the trial's)")
        return info

    def ruleset(self, devices: dict[str, str]) -> str:
        """What nsb loads: its table, then the task's ruleset (``devices``: the node's
        name of each port)."""
        address = {plan.port: plan.address.split("/")[0] for plan in self.plans}
        plan = RulePlan(self.table, self.options["mode"],
                        tuple(devices[i.name] for i in self.interfaces),
                        tuple(devices[p] for p in self.clients),
                        tuple((devices[p], address[p]) for p in self.servers),
                        self.options.get("max_new_per_s"), self.options.get("max_sessions"),
                        self.options.get("max_pps"))
        own = nftables_rules.own_rules(plan)
        return own + ("\n" + self.user_rules if self.user_rules else "")

    def preflight(self, facts: dict) -> list[str]:
        """The ruleset as the node's nft and kernel take it (``nft -c``: nothing
        changes), none of its tables there already, and the settings the node can
        take: a bad ruleset is one located line before anything starts."""
        if self.executor.which("nft") is None:
            return []  # the binaries' check says so
        devices = kernel_names(self.executor, self.interfaces)
        node = NftablesNode(self.executor, self.ruleset(devices), self._tables(), {})
        there = sorted(set(self.user_tables) & node.present_tables())
        if there:
            family, name = there[0]
            raise self.spec.options_where.error(
                f"table {family} {name} of the ruleset is on node {self.node.name} already; "
                "nsb deletes the tables its ruleset makes at teardown, so it loads none that "
                "was there: name yours apart, or delete it first", "ruleset")
        checked = node.check()
        if checked.returncode:
            raise self._nft_error(node.text, checked.stderr or checked.stdout)
        if conntrack.MAX_SYSCTL in self.settings and \
                node.writable(conntrack.MAX_SYSCTL) is False:
            raise self.spec.options_where.error(_NO_MAX.format(node=self.node.name),
                                                "conntrack_max")
        return []

    def instantiate(self) -> None:
        super().instantiate()
        self.nft = NftablesNode(self.executor, self.ruleset(self.router.devices),
                                self._tables(), self.settings)
        self._write_undo()  # the tables' deletion, before they are there
        loaded = self.nft.load()
        if loaded.returncode:
            raise self._nft_error(self.nft.text, loaded.stderr or loaded.stdout)
        self.nft.save()
        self._write_undo()  # and the settings as they were, before they change
        if conntrack.MAX_SYSCTL in self.settings and \
                self.nft.writable(conntrack.MAX_SYSCTL) is False:
            raise self.spec.options_where.error(_NO_MAX.format(node=self.node.name),
                                                "conntrack_max")
        self.nft.apply()
        LOG.info("%s: nftables %s on %s (table inet %s)", self.name, self.options["mode"],
                 self.node.name, self.table)

    def _tables(self) -> list[tuple[str, str]]:
        return [("inet", self.table), *self.user_tables]

    def _write_undo(self) -> None:
        if self._undo is None:  # a lab node: its namespace goes at teardown
            return
        self._nft_undo = node_leftovers.undo_record(self.run.task_id, f"{self.name}.nftables",
                                                    self.nft.restore_script())
        node_ledger.write(self.executor, self._nft_undo)

    def collect_kpi(self) -> dict[str, float]:
        """The router's counters of its ports, conntrack's statistics summed over CPUs
        (``conntrack_found``, ``conntrack_insert_failed``, ``conntrack_drop``,
        ``conntrack_early_drop``, ...), its table's entries (``sessions``) and the
        packets of the named counters (``new_packets``, ``rate_limit_dropped``,
        ``session_limit_dropped``, ``firewall_dropped``; a ruleset's own counters as
        ``<table>.<counter>``), all cumulative but ``sessions``; after a rule churn the
        ACL's entries (``acl_entries``) and the changes made (``acl_changes``)."""
        kpis = super().collect_kpi()
        if self.nft is None:
            return kpis
        kpis.update(conntrack.stats_kpis(self.executor.run(["conntrack", "-S"]).stdout))
        kpis["sessions"] = float(self.session_count())
        listed = self.executor.run(["nft", "-j", "list", "counters"]).stdout
        try:
            kpis.update(conntrack.counter_kpis(listed, self.table, self.user_tables))
        except ValueError as exc:
            raise RunError(f"{self.name}: {exc}") from None
        kpis.update(self.churn_kpis())  # a rule churn's: the ACL's entries, the changes
        return kpis

    def install_rules(self, installed: int) -> None:
        nftables_churn.install(self.executor, self.table, installed)

    def churn_rules(self, installed: int, changes_per_s: float, churn_s: float) -> int:
        return nftables_churn.churn(self.executor, self.table, installed, changes_per_s,
                                    churn_s)

    def rules_now(self) -> int:
        return nftables_churn.entries(self.executor, self.table)

    def reset_state(self) -> None:
        """Empty the conntrack table of the node's network namespace (``conntrack -F``):
        every connection is new again. The named counters stay: they are cumulative,
        read as differences like every KPI."""
        self.executor.run(["conntrack", "-F"])

    def session_count(self, open_only: bool = False) -> int:
        """``conntrack -C``: the entries of the node's network namespace; ``open_only``:
        its TCP entries ESTABLISHED and its UDP entries (conntrack's count of each
        listing). In the lab (a namespace per node) those are only the trial's; on a
        pod's server in its initial namespace every connection of the machine is in
        it (its SSH too)."""
        try:
            if open_only:
                listed = self.executor.run(["sh", "-c", conntrack.LIST_OPEN]).stdout
                return conntrack.shown(listed)
            return conntrack.count(self.executor.run(["conntrack", "-C"]).stdout)
        except ValueError as exc:
            raise RunError(f"{self.name}: {exc}") from None

    def terminate(self) -> None:
        if self.nft is not None:
            self.nft.restore()
            self.nft = None
        if self._nft_undo is not None:
            node_ledger.remove(self.executor, self._nft_undo)
            self._nft_undo = None
        super().terminate()

    def _nft_error(self, text: str, stderr: str) -> Exception:
        """nft's complaint: on the task's ruleset, a line of it; on nsb's own rules
        (a kernel without connlimit, say), the node's failure."""
        line, said = nftables_rules.complaint(stderr)
        theirs = len(self.user_rules.splitlines())
        own = len(text.splitlines()) - theirs - 1  # a blank line between the two
        if line is not None and line > own and self.user_rules:
            return self._ruleset_error(max(1, min(line - own - 1, theirs)), f"nft: {said}")
        return RunError(f"{self.name}: nft on {self.node.name} refused nsb's rules: {said}"
                        + (f" (line {line}: {text.splitlines()[line - 1].strip()})"
                           if line and line <= len(text.splitlines()) else ""))

    def _ruleset_error(self, line: int, message: str) -> TaskError:
        where = self.spec.options_where
        if self.ruleset_file:
            return TaskError(f"{message} (the ruleset of {self.name}, options.ruleset)",
                             self.ruleset_file, line)
        return where.error(f"line {line} of the ruleset: {message}", "ruleset")


_NO_MAX = ("node {node} is in a network namespace of its own, and the kernel takes "
           "nf_conntrack_max only in the initial one: bound the connections with "
           "max_sessions instead")


def _sides(options: dict, names: list[str], where) -> tuple[list[str], list[str]]:
    """The client-side and server-side ports: as given, else the first of each pair of
    ports faces the clients, the second the servers."""
    for key in ("client_ports", "server_ports"):
        for index, port in enumerate(options.get(key) or []):
            if port not in names:
                raise where.error(f"'{port}' is not one of the VNF's ports "
                                  f"({', '.join(names)})", key, index)
    clients, servers = options.get("client_ports"), options.get("server_ports")
    if clients is None and servers is None:
        clients, servers = names[0::2], names[1::2]
    elif clients is None:
        clients = [n for n in names if n not in servers]
    elif servers is None:
        servers = [n for n in names if n not in clients]
    both = [port for port in servers if port in clients]
    if both:
        raise where.error(f"'{both[0]}' is a client port and a server port", "server_ports")
    mode = options["mode"]
    if mode == "firewall" and not clients:
        raise where.error("a firewall lets new connections in only from client ports, and "
                          "there are none", "client_ports")
    if mode == "nat" and not servers:
        raise where.error("NAT rewrites what leaves the server ports, and there are none",
                          "server_ports")
    return list(clients), list(servers)


def _user_ruleset(value: str | None, run, where) -> tuple[str, str]:
    """The task's ruleset and the file it came from ('' when inline): text with a new
    line, a brace or a ';' is the ruleset itself, anything else a file name."""
    if not value:
        return "", ""
    if any(mark in value for mark in "\n{;"):
        return value if value.endswith("\n") else value + "\n", ""
    path = run.task_relative(value)
    try:
        text = input_file.read_text(path)
    except TaskError as exc:
        raise where.error(f"the ruleset {exc}", "ruleset") from None
    try:
        shown = str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return text if text.endswith("\n") or not text else text + "\n", shown
