"""Configuration (oslo.config): /etc/nsb/nsb.conf or --config-file.

``oslo-config-generator --namespace nsb`` turns list_opts() into
etc/nsb/nsb.conf.sample (``tox -e genconfig``).
"""

from __future__ import annotations

import functools
import os

from oslo_config import cfg

from nsb import redact
from nsb.errors import NsbError
from nsb.task import input_file

DEFAULT_CONFIG_FILE = "/etc/nsb/nsb.conf"

DEFAULT_OPTS = [
    cfg.StrOpt("results_dir", default="/var/lib/nsb/results",
               help="Where each task's results go, one directory per task id "
                    "(results.json, events.jsonl, logs/)."),
    cfg.StrOpt("log_dir", default="/var/log/nsb",
               help="Where nsb writes its own log, one file per task id (<task_id>.log)."),
    cfg.FloatOpt("vnf_start_timeout", default=30.0, min=1.0,
                 help="Seconds a VNF or generator may take to become ready."),
    cfg.FloatOpt("nfvi_interval", default=1.0, min=0.0,
                 help="Seconds between NFVi KPI samples (CPU, RSS, context switches of the "
                      "VNF processes, per-core utilisation) while traffic runs; 0 disables."),
]


def list_opts():
    """Options by group, for oslo-config-generator: nsb's own, then each installed
    output's section (named after the output, e.g. ``[influxdb]``)."""
    return [("DEFAULT", DEFAULT_OPTS), *_output_opts()]


@functools.cache
def _output_opts() -> tuple[tuple[str, list[cfg.Opt]], ...]:
    """Each installed output's section; looked up once (load checks every file with it)."""
    from stevedore import driver

    from nsb import plugins

    found = []
    for name in plugins.available("nsb.outputs"):
        try:
            cls = driver.DriverManager("nsb.outputs", name, invoke_on_load=False).driver
        except Exception:  # a broken third-party plugin must not stop nsb from starting
            continue
        if getattr(cls, "CONF_OPTS", ()):
            found.append((name, list(cls.CONF_OPTS)))
    return tuple(found)


def output_defaults(conf: cfg.ConfigOpts) -> dict[str, dict]:
    """Per output type, the values of its nsb.conf section (what ``RunInfo`` carries)."""
    return {group: {opt.dest: getattr(conf[group], opt.dest) for opt in opts}
            for group, opts in _output_opts()}


def load(config_files: list[str] | None = None) -> cfg.ConfigOpts:
    """Read the given files, else /etc/nsb/nsb.conf if present, else the defaults."""
    conf = cfg.ConfigOpts()
    for group, opts in list_opts():
        conf.register_opts(opts, group=None if group == "DEFAULT" else group)
    files = list(config_files or [])
    for path in files:
        if not os.path.lexists(path):
            raise NsbError(f"config file not found: {path}")
    if not files and os.path.isfile(DEFAULT_CONFIG_FILE):
        files = [DEFAULT_CONFIG_FILE]
    for path in files:
        input_file.read_text(path)  # a regular UTF-8 file of sane size, or one line why not
        check_known_options(path)
    try:
        conf(args=[], project="nsb", default_config_files=files, default_config_dirs=[])
    except (cfg.Error, ValueError) as exc:
        raise NsbError(f"bad configuration: {exc}") from None
    for group, opts in list_opts():  # oslo checks values on access: check them all now
        section = conf if group == "DEFAULT" else conf[group]
        for opt in opts:
            try:
                getattr(section, opt.dest)
            except (cfg.Error, ValueError) as exc:
                raise NsbError(_bad_value(files, group, opt, exc)) from None
    return conf


def _bad_value(files: list[str], group: str, opt: cfg.Opt, exc: Exception) -> str:
    """``nsb.conf: [DEFAULT] vnf_start_timeout: ...`` instead of oslo's LocationInfo(...)."""
    where = ""
    for path in reversed(files):  # the last file that sets it is the one oslo used
        sections: dict = {}
        cfg.ConfigParser(path, sections).parse()
        if opt.dest in sections.get(group, {}):
            where = f"{path}: "
            break
    reason = str(exc)
    if "is not valid:" in reason:
        reason = "not valid:" + reason.split("is not valid:", 1)[1]
    return f"bad configuration: {where}[{group}] {opt.dest}: {redact.text(reason.strip())}"


def check_known_options(path: str) -> None:
    """oslo.config ignores options it does not know: a misspelt one would silently
    keep its default, so every [group] key of ``path`` must be one nsb reads."""
    sections: dict = {}
    try:
        cfg.ConfigParser(path, sections).parse()
    except cfg.ParseError as exc:
        raise NsbError(f"bad configuration: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise NsbError(f"bad configuration: {path}: cannot read it ({exc})") from None
    known = {group: {opt.dest for opt in opts} for group, opts in list_opts()}
    for group, keys in sections.items():
        if group not in known:
            raise NsbError(f"bad configuration: {path}: unknown section [{group}]; "
                           f"allowed: {', '.join(f'[{g}]' for g in known)}")
        for key in keys:
            if key not in known[group]:
                raise NsbError(f"bad configuration: {path}: [{group}] {key}: unknown option; "
                               f"allowed: {', '.join(sorted(known[group]))}")
