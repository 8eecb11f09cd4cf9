"""SLA gates for CI: thresholds on a run's results, checked after it, as JUnit.

An SLA is ``METRIC OP VALUE[@FRAME]``: ``ndr_pps>=1.2M@64`` (NDR at 64 B of at
least 1.2 Mpps), ``latency_p99_us<=50``, ``regression_pct<=5`` (NDR at most 5 %
below a baseline task's at each frame size). Without ``@FRAME`` it holds for
every frame size. A missed SLA makes ``nsb`` exit 4 (bad input is 2, a failed
run 3), so CI can tell a slower DUT from a broken lab. A check whose numbers the
traffic generator set (``limited_by: generator``: a regression where either run
was generator-limited, a throughput threshold a generator-limited result falls
short of) is not comparable: it says nothing of the DUT, and exits 5 when no
check was missed. So is a check of an answer that carries warnings (its
confirmation lost frames: the answer is not confirmed).

Stateful answers have their own metrics: ``cps>=50k`` (a ``cps`` answer's connections
a second), ``sessions>=1M`` (a ``concurrent_sessions`` answer's sessions held),
``dut_sessions>=...`` (the DUT's own count at any stateful answer). They are no frame
size's, so ``@FRAME`` is refused with them; the frame metrics leave the ``cps`` and
``concurrent_sessions`` answers alone (their packets are not what was measured), and
``regression_pct`` compares each answer in its own unit. ``reset_time_s<=0.5`` and
``blocked_time_s<=0.01`` check a ``reset_time`` or ``reconfig`` answer (its trials' mean
outage by frame loss), ``neighbour_drop_pct<=5`` a ``noisy_neighbour`` answer (0 when the
drop is within the runs' own spread), ``mac_capacity>=4096`` and
``mac_learning_rate_pps>=1000`` a ``mac_learning`` answer (RFC 2889: the switch's table
capacity, its learning rate), ``overload_recovery_s<=1`` an ``overload_recovery`` answer
(the longer of its mean times until no frame is lost and until latency is back); the
other metrics leave those answers alone.
"""

from __future__ import annotations

import operator
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from nsb import frames, stateful_kpis
from nsb.errors import TaskError
from nsb.events import TaskStatus
from nsb.frames import shown
from nsb.report import summary
from nsb.report.compare import generator_limited

# metrics of answers that are no throughput -> the result's key that marks them (their
# summary columns, nsb.report.summary.OWN_ANSWERS): a reset_time or reconfig answer's
# mean outage by frame loss, an overload's recovery, a noisy_neighbour answer's drop (0
# when within the runs' spread), a switch's MAC capacity and learning rate
OWN_ANSWER_METRICS = {column: kind for kind, columns in summary.OWN_ANSWERS.items()
                      for column in columns}
# SLA metric -> the summary column it reads (nsb.report.summary.row)
METRICS: dict[str, str] = {
    "ndr_pps": "throughput_pps", "ndr_mbps": "throughput_mbps",
    "line_rate_pct": "line_rate_pct", "loss_pct": "loss_pct",
    **{f"latency_{key}": f"latency_{key.replace('.', '_')}" for key in summary.LATENCY_KEYS},
    "cps": "cps", "sessions": "sessions", "dut_sessions": "dut_sessions",
    **{column: column for column in OWN_ANSWER_METRICS},
}
REGRESSION = "regression_pct"  # % below the baseline's NDR (negative: faster)
# stateful metrics -> the answers they apply to (their kinds); None: every stateful one
STATEFUL_METRICS: dict[str, tuple[str, ...] | None] = {
    "cps": (stateful_kpis.CPS,), "sessions": (stateful_kpis.SESSIONS,), "dut_sessions": None}
# metrics whose value a generator-limited result only bounds from below
THROUGHPUT_METRICS = ("ndr_pps", "ndr_mbps", "line_rate_pct", *STATEFUL_METRICS)
# earlier spellings of a metric
ALIASES = {"latency_p99.9_us": "latency_p99_9_us"}
OPERATORS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
_SLA = re.compile(r"^\s*([a-z0-9_.]+)\s*(>=|<=|>|<)\s*([0-9]*\.?[0-9]+)([kKMG]?)\s*"
                  r"(?:@\s*([0-9]+|[Ii][Mm][Ii][Xx])\s*(?:B)?)?\s*$")


@dataclass(frozen=True)
class Sla:
    text: str
    metric: str
    op: str
    value: float
    frame_size: int | str | None = None  # bytes, or IMIX


@dataclass(frozen=True)
class Outcome:
    sla: Sla
    scenario: str
    frame_size: int | str | None
    measured: float | None
    passed: bool
    message: str
    comparable: bool = True  # False: the generator set the numbers (passed is False)


def parse(text: str) -> Sla:
    match = _SLA.match(text)
    allowed = ", ".join([*METRICS, REGRESSION])
    if not match:
        raise TaskError(f"{text!r} is not METRIC OP VALUE[@FRAME], e.g. 'ndr_pps>=1.2M@64' "
                        f"or 'latency_p99_us<=50'; metrics: {allowed}", "--sla")
    metric, op, number, suffix, frame = match.groups()
    metric = ALIASES.get(metric, metric)
    if metric not in METRICS and metric != REGRESSION:
        raise TaskError(f"unknown metric {metric!r} in {text!r}; metrics: {allowed}", "--sla")
    if frame and metric in STATEFUL_METRICS:
        raise TaskError(f"{text.strip()!r}: {metric} is a stateful answer's, measured in "
                        f"connections, not at a frame size: drop '@{frame}'", "--sla")
    return Sla(text.strip(), metric, op, float(number) * _SUFFIX[suffix],
               _frame(frame))


def _frame(text: str | None) -> int | str | None:
    if not text:
        return None
    return frames.IMIX_NAME if frames.is_mix_name(text) else int(text)


def check(slas: list[Sla], results: list[dict],
          baseline: list[dict] | None = None) -> list[Outcome]:
    """Every SLA against every result it applies to; an SLA that applies to no
    result is missed (a frame size that was not measured proves nothing)."""
    outcomes = []
    for sla in slas:
        if sla.metric == REGRESSION and baseline is None:
            raise TaskError(f"{sla.text!r} compares with a baseline: give --baseline TASK_ID",
                            "--sla")
        matching = [r for r in results if applies(sla, r)]
        if not matching:
            where = f" at {shown(sla.frame_size)}" if sla.frame_size else \
                _answers_named(sla.metric)
            outcomes.append(Outcome(sla, "", sla.frame_size, None, False,
                                    f"{sla.text}: no result{where}"))
        for result in matching:
            outcomes.append(_one(sla, result, baseline))
    return outcomes


def applies(sla: Sla, result: dict) -> bool:
    """Whether ``sla`` checks ``result``: a stateful metric the stateful answers of its
    kinds, a frame metric the answers measured in packets (frames, stateful
    throughput) at its frame size; a regression every answer, in its own unit."""
    kind = stateful_kpis.kind(result)
    if sla.metric in STATEFUL_METRICS:
        kinds = STATEFUL_METRICS[sla.metric]
        return bool(kind) and (kinds is None or kind in kinds)
    if sla.frame_size is not None and result.get("frame_size") != sla.frame_size:
        return False
    marks = set(OWN_ANSWER_METRICS.values()) & set(result)
    if sla.metric in OWN_ANSWER_METRICS or marks:  # an outage or a drop, not a throughput
        return OWN_ANSWER_METRICS.get(sla.metric) in marks
    return sla.metric == REGRESSION or stateful_kpis.value_key(result) == "throughput_pps"


def _answers_named(metric: str) -> str:
    """Which answers a stateful metric looked for, when there was none."""
    kinds = STATEFUL_METRICS.get(metric, ())
    if kinds is None:
        return " that is stateful"
    return f" of kind {', '.join(kinds)}" if kinds else ""


def _one(sla: Sla, result: dict, baseline: list[dict] | None) -> Outcome:
    scenario, frame = str(result.get("scenario", "")), result.get("frame_size")
    frame = stateful_kpis.kind(result) or frame  # a stateful answer is no frame size's
    where = f"{scenario} {shown(frame)}"
    limits = str(result.get("limited_by") or "")
    warned = "; ".join(str(w) for w in result.get("warnings") or [])
    if sla.metric == REGRESSION:
        base, base_limits = _baseline_ndr(baseline or [], scenario, result)
        if not base:
            return Outcome(sla, scenario, frame, None, False,
                           f"{sla.text}: the baseline has no NDR at {shown(frame)}")
        measured = 100.0 * (base - float(stateful_kpis.value(result) or 0.0)) / base
        if generator_limited(limits) or generator_limited(base_limits):
            return _not_comparable(sla, scenario, frame, measured,
                                   f"this run: {limits or '-'}, baseline: {base_limits or '-'}")
    else:
        value = summary.row("", result)[METRICS[sla.metric]]
        if value is None:
            return Outcome(sla, scenario, frame, None, False,
                           f"{sla.text}: {where} has no {sla.metric}")
        measured = float(value)
    latency = "; ".join(str(w) for w in result.get("latency_warnings") or [])
    if latency and sla.metric.startswith("latency_"):
        warned = "; ".join(w for w in (warned, latency) if w)
    if warned:
        return _not_comparable(sla, scenario, frame, measured, "",
                               f"the answer was not confirmed: {warned}")
    passed = OPERATORS[sla.op](measured, sla.value)
    if not passed and sla.metric in THROUGHPUT_METRICS and generator_limited(limits):
        return _not_comparable(sla, scenario, frame, measured, f"this run: {limits}")
    verdict = "met" if passed else "MISSED"
    return Outcome(sla, scenario, frame, measured, passed,
                   f"{sla.text}: {where}: {sla.metric} = {measured:,.6g}, {verdict}")


def _not_comparable(sla: Sla, scenario: str, frame, measured: float, limits: str,
                    why: str = "") -> Outcome:
    why = why or f"the generator set the number (limited by {limits})"
    return Outcome(sla, scenario, frame, measured, False,
                   f"{sla.text}: {scenario} {shown(frame)}: {sla.metric} = {measured:,.6g}, "
                   f"NOT COMPARABLE: {why}", comparable=False)


def _baseline_ndr(baseline: list[dict], scenario: str, result: dict
                  ) -> tuple[float | None, str]:
    """The baseline's mean answer like ``result`` (its frame size, or its stateful
    kind), in the same unit, and what limited it."""
    kind = stateful_kpis.kind(result)
    same = [r for r in baseline if stateful_kpis.kind(r) == kind
            and (kind or r.get("frame_size") == result.get("frame_size"))]
    named = [r for r in same if r.get("scenario") == scenario] or same
    values = [float(stateful_kpis.value(r) or 0.0) for r in named]
    limits = ", ".join(sorted({str(r.get("limited_by") or "") for r in named} - {""}))
    return (sum(values) / len(values) if values else None), limits


def junit(outcomes: list[Outcome], task_id: str, test_case: str, status: str,
          error: str = "") -> str:
    """JUnit XML: one testcase per SLA and result; a run that did not finish is an
    <error> testcase, so CI sees it even without SLAs; a check the generator kept
    from comparing is <skipped>, not a failure."""
    suite = ET.Element("testsuite", name=f"nsb {test_case} {task_id}")
    failures = errors = skipped = 0
    if status != TaskStatus.OK:
        case = ET.SubElement(suite, "testcase", classname=test_case, name="run")
        ET.SubElement(case, "error", message=f"status {status}").text = error or status
        errors += 1
    for outcome in outcomes:
        name = outcome.sla.text + (f" [{outcome.scenario} {shown(outcome.frame_size)}]"
                                   if outcome.frame_size is not None else "")
        case = ET.SubElement(suite, "testcase", classname=f"{test_case}.{outcome.scenario}"
                             if outcome.scenario else test_case, name=name)
        if not outcome.comparable:
            ET.SubElement(case, "skipped", message=outcome.message)
            skipped += 1
        elif not outcome.passed:
            ET.SubElement(case, "failure", message=outcome.message).text = outcome.message
            failures += 1
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: str | Path, text: str) -> None:
    from nsb.task import input_file

    input_file.write_text(path, text)
