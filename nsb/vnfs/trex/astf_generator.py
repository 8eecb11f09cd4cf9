"""TRex in ASTF mode (``t-rex-64 -i --astf``) as nsb's stateful generator, driven by
TRex's own ASTF client (``trex.astf.api.ASTFClient``).

The server, its config and its ports are stateless TRex's (``generator``); a trial is
a stateful one (``Trial.sessions``): a profile (one of nsb's programs, or a TRex ASTF
profile file with its tunables) loaded, started at ``mult`` = the connection rate for
the trial's duration, and TRex's client and server counters read once its connections
have ended (``astf_stats``). Each port pair's first port is the client side, its
second the server side, as TRex's ASTF pairs them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import time
from pathlib import Path

from nsb.errors import RunError
from nsb.sessions import PROGRAMS, SessionLoad
from nsb.trial import Trial, TrialResult
from nsb.vnfs.trex import astf_programs, astf_stats
from nsb.vnfs.trex.astf_options import OPTIONS_SCHEMA
from nsb.vnfs.trex.generator import TrexTrafficGen
from nsb.vnfs.trex.server import command

LOG = logging.getLogger(__name__)
# TRex's ASTF traffic starts this long after start() returns (measured by FD.io CSIT,
# the same on every profile and CPU it tried)
START_DELAY_S = 0.112


class TrexAstfGen(TrexTrafficGen):
    """Cisco TRex ASTF (stateful): connections per second and sessions through NAT and firewalls."""

    OPTIONS_SCHEMA = OPTIONS_SCHEMA
    API_MODULE, CLIENT = "trex.astf.api", "ASTFClient"
    SENDS_FRAME_MIX = False
    SAMPLES_INTERVALS = False
    SENDS_BURSTS = False
    SENDS_SESSIONS = True  # stateful trials (Trial.sessions), and only those
    no_frame_mix_reason = "TRex in ASTF mode sends connections, not a frame mix"

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        self.ranges = []
        for key in ("client_range", "server_range"):
            first, _, last = options[key].partition("-")
            if _number(first) > _number(last):
                raise where.error(f"{options[key]}: its first address is above its last", key)
            self.ranges.append((first, last))

    def command(self) -> list[str]:
        o = self.options
        return command(self.trex_path, self.cfg_path, o.get("queues_per_port"),
                       ["--astf", *o["extra_args"]])

    def traffic_described(self) -> dict:
        client, server = self.ranges
        return {"connections": f"from {client[0]}-{client[1]} behind each pair's first port "
                               f"to {server[0]}-{server[1]}:{self.options['server_port']} "
                               "behind its second"}

    def wait_until_ready(self, timeout: float) -> None:
        self.client = self.server.wait_ready(self._connect, timeout)
        count = len(self.client.get_all_ports())
        if count != len(self.ports):
            raise RunError(f"{self.name}: TRex has {count} ports, nsb configured "
                           f"{len(self.ports)} (log: {self.log})")
        self.client.reset()
        LOG.info("%s: TRex %s ready in ASTF mode on %s (RPC %s:%d)", self.name,
                 self._version(), self.node.name, self.executor.service_host, self.rpc_port)

    def check_sessions(self, load: SessionLoad) -> str:
        """Why this generator cannot run ``load`` ('' when it can): a TRex ASTF profile
        file that does not load with its tunables (read with TRex's own client)."""
        if load.program in PROGRAMS:
            return ""
        if not Path(load.program).is_file():
            return f"no TRex ASTF profile file {load.program}"
        from nsb.vnfs.trex import install

        api = install.load_api(install.client_dir(self.trex_path,
                                                  self.options.get("trex_client_lib")),
                               self.API_MODULE)
        try:
            _file_profile(api, load)
        except RunError as exc:
            return str(exc)
        return ""

    def run_trial(self, trial: Trial, send=None) -> TrialResult:
        if trial.sessions is None:
            raise RunError(f"{self.name}: TRex in ASTF mode runs stateful trials (the cps, "
                           "concurrent_sessions and stateful_throughput profiles); for frames "
                           "use the trex generator")
        return super().run_trial(trial, send or self._session_trial)

    def _session_trial(self, trial: Trial) -> TrialResult:
        """FD.io CSIT's trial: the profile loaded afresh (TRex's traffic duration and
        flow counts are absolute), started at mult = the connection rate, stopped after
        the trial's duration, each connection's hold and TRex's start-up delay: what it
        did not attempt by then was never attempted (TRex stretches a trial it cannot
        keep up with rather than drop connections)."""
        load, client = trial.sessions, self.client
        intended = round(load.cps * trial.duration_s)
        client.reset()
        if load.program in PROGRAMS:
            ranges = astf_programs.Ranges(*self.ranges, server_port=self.options["server_port"])
            client.load_profile(astf_programs.profile(self.api, load, ranges, limit=intended))
        else:
            client.load_profile(_file_profile(self.api, load))
        client.clear_stats()
        started = time.monotonic()
        # TRex ends every flow when its duration is over (nc: no waiting for them to
        # close): a held session's duration is its hold's too; the limit keeps its
        # connections to those the trial intended
        lasts = trial.duration_s + load.hold_s + load.data_seconds
        probes = self.options["latency_pps"] if trial.latency else 0
        client.start(mult=load.cps, duration=lasts, nc=True, latency_pps=probes)
        time.sleep(lasts + START_DELAY_S + self.options["wait_close_s"])
        client.stop(block=True)  # flows still open end now, unfinished
        elapsed = time.monotonic() - started
        return astf_stats.trial_result(trial, self, client.get_stats(), elapsed)


def _file_profile(api, load: SessionLoad):
    """A TRex ASTF profile file loaded with its tunables, by TRex's own loader (which
    runs the file and hands the tunables to its get_profile); one line when it does not
    load or refuses a tunable (its argparse's own words)."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            profile = api.ASTFProfile.load(load.program, tunables=list(load.tunables))
    except BaseException as exc:  # a profile file runs as Python: anything goes
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise RunError(f"TRex's ASTF profile {load.program} does not load: "
                       f"{lines[-1] if lines else type(exc).__name__}") from None
    if profile is None:  # its argparse refused the tunables (and printed why)
        lines = [line.strip() for line in said.getvalue().splitlines() if line.strip()]
        why = re.sub(r"^\S+: error: ", "", lines[-1]) if lines else "refused"
        raise RunError(f"TRex's ASTF profile {load.program} does not take the tunables "
                       f"{' '.join(load.tunables)}: {why}")
    return profile


def _number(address: str) -> int:
    a, b, c, d = (int(part) for part in address.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d
