"""Configuration (oslo.config): /etc/nsb/nsb.conf or --config-file.

``oslo-config-generator --namespace nsb`` turns list_opts() into
etc/nsb/nsb.conf.sample (``tox -e genconfig``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os

from oslo_config import cfg

from nsb import redact
from nsb.errors import NsbError
from nsb.task import input_file

DEFAULT_CONFIG_FILE = "/etc/nsb/nsb.conf"

OUTPUTS_OPT = cfg.ListOpt(
    "outputs", default=[], deprecated_opts=[cfg.DeprecatedOpt("dispatcher", group="DEFAULT")],
    help="Outputs every task gets besides those it names, e.g. file,influxdb (Yardstick's "
         "'dispatcher' reads as this); each takes its settings from its own section "
         "([influxdb]). A task that names an output of the same type keeps its own.")

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
    OUTPUTS_OPT,
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
    """Per output type, the options its nsb.conf section sets (what ``RunInfo``
    carries): one left out is not there, so the output's own default never hides it."""
    return {group: {opt.dest: getattr(conf[group], opt.dest) for opt in opts
                    if is_set(conf, opt.dest, group)}
            for group, opts in _output_opts()}


def is_set(conf: cfg.ConfigOpts, name: str, group: str | None = None) -> bool:
    """Whether a file (or oslo's environment) sets the option, under any of its names."""
    location = conf.get_location(name, group).location
    return location not in (cfg.Locations.opt_default, cfg.Locations.set_default)


def _names(opt: cfg.Opt, group: str) -> list[tuple[str, str]]:
    """(group, key) of every spelling a file may use: nsb's, then Yardstick's."""
    return [(group, opt.dest)] + [(old.group or group, old.name or opt.dest)
                                  for old in opt.deprecated_opts]


@contextlib.contextmanager
def _quiet_spellings():
    """oslo warns that Yardstick's names are "deprecated": they are accepted as they
    are, the sample and the docs list them, so the warning is noise on every run."""
    oslo_log = logging.getLogger("oslo_config.cfg")
    level = oslo_log.level
    oslo_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        oslo_log.setLevel(level)


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
    with _quiet_spellings():
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
    check_outputs(conf, files)
    return conf


def check_outputs(conf: cfg.ConfigOpts, files: list[str]) -> None:
    """Every name in ``outputs`` must be an installed output: a misspelt one would
    silently send nothing."""
    from nsb import plugins

    installed = plugins.available("nsb.outputs")
    for name in conf.outputs:
        if name not in installed:
            path, group, key = _where_set(files, "DEFAULT", OUTPUTS_OPT)
            raise NsbError(f"bad configuration: {path}[{group}] {key}: unknown output "
                           f"'{name}'; outputs: {', '.join(installed)}")


def _where_set(files: list[str], group: str, opt: cfg.Opt) -> tuple[str, str, str]:
    """(``path: `` of the last file that sets the option, the section and key it uses
    there), or ("", nsb's section and name) when no file can be found."""
    for path in reversed(files):  # the last file that sets it is the one oslo used
        sections: dict = {}
        cfg.ConfigParser(path, sections).parse()
        for section, key in _names(opt, group):
            if key in sections.get(section, {}):
                return f"{path}: ", section, key
    return "", group, opt.dest


def _bad_value(files: list[str], group: str, opt: cfg.Opt, exc: Exception) -> str:
    """``nsb.conf: [DEFAULT] vnf_start_timeout: ...`` instead of oslo's LocationInfo(...)."""
    where, group, key = _where_set(files, group, opt)
    reason = str(exc)
    if "is not valid:" in reason:
        reason = "not valid:" + reason.split("is not valid:", 1)[1]
    return f"bad configuration: {where}[{group}] {key}: {redact.text(reason.strip())}"


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
    known: dict[str, set[str]] = {}
    for group, opts in list_opts():
        for opt in opts:
            for section, key in _names(opt, group):
                known.setdefault(section, set()).add(key)
    for group, keys in sections.items():
        if group not in known:
            raise NsbError(f"bad configuration: {path}: unknown section [{group}]; "
                           f"allowed: {', '.join(f'[{g}]' for g in known)}")
        for key in keys:
            if key not in known[group]:
                raise NsbError(f"bad configuration: {path}: [{group}] {key}: unknown option; "
                               f"allowed: {', '.join(sorted(known[group]))}")
