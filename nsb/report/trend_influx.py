"""Trends over InfluxDB, and each run's place in its trend written back for Grafana.

``history`` reads what nsb's influxdb output wrote (every finished task's nsb_result
and nsb_result_chain points) as the tests and points the results directory gives
(nsb.report.trend): a test is the test case with its task args, the scenario, the
profile, the frame size (a stateful answer's unit) and the chain.

Grafana cannot run jumpavg, so ``marks`` turns the trends into nsb_trend points, one
per test and counted run at the run's result time: its group's average and whether
a regression (change -1) or progression (change 1) began there. Written again after
more runs, each point overwrites itself (same series, same time): a step that moves
to another run as the history grows moves its mark too.
"""

from __future__ import annotations

from nsb import stateful_kpis, units
from nsb.outputs.influxdb import names as n
from nsb.outputs.influxdb import reader
from nsb.outputs.influxdb.influxql import ident, select
from nsb.outputs.influxdb.points import InfluxPoint
from nsb.outputs.influxdb.settings import InfluxSettings
from nsb.report import trend
from nsb.report.summary import OWN_ANSWERS

CHANGE = {"regression": -1.0, "progression": 1.0}


def _since(days: float) -> str:
    return f"time > now() - {days:g}d"


def finished_tasks(settings: InfluxSettings, days: float) -> set[str]:
    """Tasks that ended ok: a run that failed or still runs is no point of a trend."""
    series = reader.query(settings, select(n.TASK, [(ident("duration_s"), "")],
                                           [f"{ident('status')} = 'ok'", _since(days)],
                                           group_by=[n.TASK_ID]))
    return {tags.get(n.TASK_ID) for tags, _ in reader.rows(series)}


def _frame(tag: str):
    return int(tag) if tag.isdigit() else tag


def _key(tags: dict, stateful_kind: str = "") -> tuple:
    return (trend.test_name(tags.get(n.TEST_CASE, ""), tags.get(n.TASK_ARGS, "")),
            tags.get(n.SCENARIO, ""), tags.get(n.PROFILE, ""),
            trend.key_frame(_frame(tags.get(n.FRAME_SIZE, "")), stateful_kind))


# a stateful answer's own number, and its group's average in nsb_trend, by unit
_VALUE = {stateful_kpis.UNIT[key]: key for key in (n.CPS, n.SESSIONS)}
_GROUP_AVG = {stateful_kpis.UNIT[n.CPS]: n.GROUP_AVG_CPS,
              stateful_kpis.UNIT[n.SESSIONS]: n.GROUP_AVG_SESSIONS}


# an answer under change's metric (nsb.report.trend.own_metrics) -> its nsb_result field
OWN_FIELDS = {"reset_time_s": n.RESET_TIME_S, "blocked_time_s": n.BLOCKED_TIME_S,
              "overload_recovery_s": n.OVERLOAD_RECOVERY_S,
              "neighbour_drop_pct": n.NEIGHBOUR_DROP_PCT, "mac_capacity": n.MAC_CAPACITY,
              "mac_learning_rate_pps": n.MAC_LEARNING_RATE_PPS}
# in nsb_trend: an answer under change's value under its metric, its group's average
# under group_avg_<metric>
_VALUE.update({metric: metric for metric in OWN_FIELDS})
_GROUP_AVG.update({metric: f"group_avg_{metric}" for metric in OWN_FIELDS})


def _own_metrics(tags: dict, row: dict) -> list[str]:
    """The metrics of an answer under change, by the fields its row holds ([] for
    other answers): as trend.own_metrics reads a result."""
    if row.get(n.RESET_TIME_S) is not None:
        return [trend.reset_metric(tags.get(n.PROFILE))]
    return [metric for metric, field in OWN_FIELDS.items()
            if metric not in OWN_ANSWERS["reset"] and row.get(field) is not None]


def _value(row: dict, key: tuple) -> float | None:
    """A result's answer: its throughput, or a stateful answer's cps or sessions."""
    found = row.get(_VALUE.get(key[3], n.THROUGHPUT_PPS))
    return float(found) if isinstance(found, (int, float)) else None


def _answer(tags: dict) -> tuple:
    return tags.get(n.TASK_ID, ""), tags.get(n.SCENARIO, ""), tags.get(n.FRAME_SIZE, "")


def history(settings: InfluxSettings, days: float = 365.0) -> dict[tuple, list[trend.Point]]:
    """Every test's points in time order, from the results of the last ``days``."""
    done = finished_tasks(settings, days)
    fields = [(ident(name), "") for name in (n.THROUGHPUT_PPS, n.WARNING_COUNT,
                                             n.RECEIVE_RATES, n.STATEFUL_KIND, n.CPS,
                                             n.SESSIONS, *OWN_FIELDS.values())]
    results = reader.query(settings, select(n.RESULT, fields, [_since(days)], group_by=["*"]))
    tests: dict[tuple, list[tuple]] = {}
    answers: dict[tuple, tuple] = {}  # (task, scenario, frame) -> the result's key, warnings
    for tags, row in reader.rows(results):
        task_id = tags.get(n.TASK_ID, "")
        warnings = bool(row.get(n.WARNING_COUNT))
        if task_id in done and (own := _own_metrics(tags, row)):
            why = trend.left_out_because(tags.get(n.LIMITED_BY), warnings)
            for metric in own:
                key = (*_key(tags)[:3],
                       trend.own_key_frame(metric, _frame(tags.get(n.FRAME_SIZE, ""))))
                tests.setdefault((*key, None), []).append(_point(
                    task_id, row, why, float(row[OWN_FIELDS[metric]])))
            continue
        key = _key(tags, str(row.get(n.STATEFUL_KIND) or ""))
        if task_id not in done or (value := _value(row, key)) is None:
            continue
        answers[_answer(tags)] = key, warnings
        why = trend.left_out_because(tags.get(n.LIMITED_BY), warnings)
        tests.setdefault((*key, None), []).append(_point(task_id, row, why, value))
    chains = reader.query(settings, select(n.RESULT_CHAIN, [(ident(n.THROUGHPUT_PPS), "")],
                                           [_since(days)], group_by=["*"]))
    for tags, row in reader.rows(chains):
        task_id = tags.get(n.TASK_ID, "")
        if task_id not in done or row.get(n.THROUGHPUT_PPS) is None:
            continue
        # a chain's share is a test of the result's (its profile) with the chain
        key, warnings = answers.get(_answer(tags), (_key(tags), False))
        why = trend.left_out_because(tags.get(n.LIMITED_BY), warnings)
        tests.setdefault((*key, int(tags.get(n.CHAIN, 0))), []).append(
            _point(task_id, row, why))
    # task ids start with their start time: the order of the runs, as in the results dir
    return {key: [p for _, p in sorted(points, key=lambda item: item[0])]
            for key, points in tests.items()}


def _point(task_id: str, row: dict, why: str, value: float | None = None) -> tuple:
    """A run's point: ``value`` (a stateful answer's), else the row's throughput."""
    samples = tuple(float(r) for r in (row.get(n.RECEIVE_RATES) or "").split(",") if r)
    value = float(row[n.THROUGHPUT_PPS]) if value is None else value
    return (task_id, row["time"]), trend.Point(task_id, value, why, row["time"] / 1e9, samples)


def marks(found: list[trend.Trend]) -> list[InfluxPoint]:
    """An nsb_trend point per test and counted run (see the module's docstring)."""
    points = []
    for one in found:
        stem, scenario, profile, frame, chain = one.test
        test_case, _, args = stem.partition(" ")
        tags = {n.TEST_CASE: test_case, n.TASK_ARGS: args, n.SCENARIO: scenario,
                n.PROFILE: profile, n.FRAME_SIZE: "" if frame is None else str(frame),
                n.CHAIN: "" if chain is None else str(chain)}
        tags = {key: str(value) for key, value in tags.items() if value != ""}
        before = None
        for point, group in trend.grouped(one):
            began = group["first"] == point.task_id and before is not None
            change = CHANGE.get(group["comment"], 0.0) if began else 0.0
            fields = {_GROUP_AVG.get(one.unit, n.GROUP_AVG_PPS): group["avg"], n.CHANGE: change,
                      _VALUE.get(one.unit, n.THROUGHPUT_PPS): point.value}
            step_pct = _step_pct(before, group) if began else None
            if step_pct is not None:
                fields[n.CHANGE_PCT] = step_pct
            fields[n.TREND_TEXT] = _text(one, point, group, before if began else None, step_pct)
            points.append(InfluxPoint(n.TREND, tags, fields, round(point.time_s * 1e9)))
            if group["last"] == point.task_id:
                before = group
    return points


def _step_pct(before: dict, group: dict) -> float | None:
    """The new group's average against the one before, in %; None when that was 0."""
    return 100.0 * (group["avg"] - before["avg"]) / before["avg"] if before["avg"] else None


def _text(one: trend.Trend, point: trend.Point, group: dict, before: dict | None,
          step_pct: float | None) -> str:
    """The annotation's words: where a group began, the step; else the run's group."""
    def text(value: float) -> str:
        return units.pps_text(value) if one.unit == "pps" else trend.value_text(value,
                                                                                 one.unit)

    if before is None:
        return f"{one.name}: run {point.task_id} in a group of {group['runs']} runs " \
               f"averaging {text(group['avg'])}"
    step = f" ({step_pct:+.1f} %)" if step_pct is not None else ""
    return (f"{group['comment']} at run {point.task_id}: {one.name} "
            f"{text(before['avg'])} -> {text(group['avg'])}{step}, jumpavg")


def write(settings: InfluxSettings, points: list[InfluxPoint]) -> None:
    """Send the marks in batches; a failure is one line naming InfluxDB's answer."""
    from nsb.errors import NsbError
    from nsb.outputs.influxdb.client import SendError, make_sender

    sender = make_sender(settings)
    try:
        lines = [point.line() for point in points]
        for start in range(0, len(lines), max(1, settings.batch_size)):
            sender.send(lines[start:start + settings.batch_size])
    except SendError as exc:
        raise NsbError(f"InfluxDB at {settings.target} did not take the trend's marks: "
                       f"{exc}") from None
    finally:
        sender.close()
