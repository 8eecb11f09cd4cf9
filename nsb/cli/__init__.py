"""The `nsb` command line: the top-level parser, and how errors become exit codes.

Each command group wires its options in its own module. Heavy imports (oslo.config,
rich, stevedore) happen inside the handlers so that `nsb --help` stays fast.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

from nsb import __version__, redact
from nsb.cli.ansible import register as register_ansible
from nsb.cli.console_log import setup_logging
from nsb.cli.node import register as register_node
from nsb.cli.plugin import register as register_plugin
from nsb.cli.results import register as register_results
from nsb.cli.task import register as register_task
from nsb.errors import Interrupted, NsbError, TaskErrors

LOG = logging.getLogger("nsb")


def build_parser() -> argparse.ArgumentParser:
    """Every command; the order here is the order `nsb --help` lists them in."""
    parser = argparse.ArgumentParser(
        prog="nsb", description="Network Services Benchmarking: RFC 2544 throughput, latency "
        "and NFVi KPIs of VNFs and vSwitches, from YAML task files.")
    parser.add_argument("--version", action="version", version=f"nsb {__version__}")
    parser.add_argument("--config-file", action="append", metavar="FILE",
                        help="configuration file (default: /etc/nsb/nsb.conf if present)")
    parser.add_argument("--debug", action="store_true",
                        help="debug logging and tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register_task(sub)
    register_node(sub)
    register_results(sub)
    register_ansible(sub)

    from nsb.grafana.cli import register as register_grafana
    from nsb.report import commands as report_commands

    report_commands.register(sub)
    register_grafana(sub)
    register_plugin(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; errors are one line on stderr (a traceback too with --debug)."""
    args = build_parser().parse_args(argv)
    logging.raiseExceptions = False  # a full disk must not print logging's own tracebacks
    setup_logging(args.debug)
    try:
        code = args.handler(args) or 0
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # the reader went away (nsb plugin list | head -1): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except Interrupted as exc:
        print(f"nsb: {exc}", file=sys.stderr)
        return 128 + getattr(signal, exc.signame, signal.SIGTERM)
    except NsbError as exc:
        if args.debug:
            LOG.exception("error")
        # several mistakes of a file: a line each; one error's own lines (a log's tail,
        # pre-flight's failed checks) follow its first as they are
        mistakes = str(exc).splitlines() if isinstance(exc, TaskErrors) else [str(exc)]
        for mistake in mistakes:
            print(f"nsb: error: {redact.text(mistake)}", file=sys.stderr)
        return exc.exit_code
    except PermissionError as exc:
        if exc.filename is None:  # not about a path the user can change: a bug
            raise
        # a file or directory of another user, e.g. under root's HOME, which `sudo -u`
        # keeps: the user can fix it, so one line naming it
        if args.debug:
            LOG.exception("error")
        print(f"nsb: error: {redact.text(str(exc.filename))}: {exc.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nsb: interrupted", file=sys.stderr)
        return 130
