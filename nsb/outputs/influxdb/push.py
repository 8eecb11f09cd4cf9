"""``nsb results push TASK_ID``: send a task's spooled InfluxDB points.

The spool (nsb.outputs.influxdb.spool) holds line protocol with each point's own
timestamp. Points are sent in batches; after each batch the server acknowledged,
the spool's sent-offset is replaced atomically, so a push that fails half-way
resumes after the last acknowledged batch and a second push sends nothing new.
Where to send defaults to where the run was writing (influxdb.spool.target.json),
with credentials from nsb.conf or the environment; options given here win.
"""

from __future__ import annotations

import glob
import logging
from pathlib import Path

from nsb.errors import NsbError
from nsb.outputs.influxdb import settings as influx_settings
from nsb.outputs.influxdb.settings import InfluxSettings
from nsb.outputs.influxdb.spool import Spool, append_lines

LOG = logging.getLogger(__name__)


def task_dir(ref: str, results_dir: Path) -> Path:
    """The results directory a task id, a unique prefix of one, or a path names."""
    candidate = Path(ref)
    if "/" in ref:
        if candidate.is_dir():
            return candidate
        raise NsbError(f"no results directory {candidate}")
    exact = Path(results_dir) / ref
    if ref not in ("", ".", "..") and exact.is_dir():
        return exact
    found = sorted(p for p in Path(results_dir).glob(f"{glob.escape(ref)}*") if p.is_dir())
    if len(found) == 1:
        return found[0]
    if found:
        raise NsbError(f"task id '{ref}' is ambiguous in {results_dir}: "
                       f"{', '.join(p.name for p in found)}")
    raise NsbError(f"no results directory {exact}")


def settings_for(results_dir: Path, conf=None, **overrides) -> InfluxSettings:
    """Settings for pushing one task: nsb.conf < the run's target < ``overrides`` (not None).

    ``conf`` is a loaded nsb.conf (oslo ConfigOpts with the [influxdb] group) or
    a mapping of its values; overrides use the option names (url, api, org,
    bucket, token, database, retention_policy, username, password, ...).
    """
    from oslo_config import cfg

    if conf is None or isinstance(conf, cfg.ConfigOpts):  # (a ConfigOpts is a Mapping too)
        conf_values = influx_settings.conf_options(conf)
    else:
        conf_values = dict(conf)
    given = {key: value for key, value in overrides.items() if value is not None}
    options = Spool(results_dir).destination()
    api = given.get("api", options.get("api"))
    if api is not None:
        other = influx_settings.V2_ONLY if api == "v1" else influx_settings.V1_ONLY
        options = {key: value for key, value in options.items() if key not in other}
    options.update(given)
    try:
        return influx_settings.resolve(options, conf_values)
    except ValueError as exc:
        key, message = exc.args
        raise NsbError(f"InfluxDB {key}: {message}") from None


def push(results_dir: Path, settings: InfluxSettings) -> int:
    """Send what is spooled and not yet sent; return how many points were sent now."""
    from nsb.outputs.influxdb.client import SendError, make_sender
    from nsb.outputs.influxdb.writer import send_with_retry

    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise NsbError(f"no results directory {results_dir}")
    spool = Spool(results_dir)
    with spool.locked():
        try:
            pending = spool.pending()
        except ValueError as exc:
            raise NsbError(str(exc)) from None
        if not pending.lines:
            LOG.info("nothing spooled to push in %s", results_dir)
            return 0
        total = len(pending.lines)
        sent = rejected = 0
        sender = make_sender(settings)
        try:
            for first in range(0, total, settings.batch_size):
                batch = pending.lines[first:first + settings.batch_size]
                end = pending.ends[first + len(batch) - 1]
                try:
                    send_with_retry(sender, batch, settings)
                except SendError as exc:
                    if exc.kind != "rejected":
                        raise NsbError(
                            f"pushing to {settings.target} failed after {sent} of {total} "
                            f"points: {exc}; push again later: what was sent is not sent "
                            "twice") from None
                    LOG.error("InfluxDB refused %d points as bad data (%s); they are in %s",
                              len(batch), exc, spool.rejected_path)
                    append_lines(spool.rejected_path, batch)
                    spool.mark_sent(end, 0)
                    rejected += len(batch)
                    continue
                spool.mark_sent(end, len(batch))
                sent += len(batch)
        finally:
            sender.close()
    LOG.info("pushed %d points to %s (%d rejected)", sent, settings.target, rejected)
    return sent
