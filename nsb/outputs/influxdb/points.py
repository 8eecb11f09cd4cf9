"""Events as InfluxDB points: measurement names, tags and fields (docs/reference/influxdb.md).

Every point carries the event's own timestamp (nanoseconds), so a point spooled
during an outage and pushed later lands where it belongs, and writing the same
point twice overwrites it instead of adding one. Fields are always floats:
InfluxDB fixes a field's type at its first write, and KPIs that are sometimes
integers and sometimes not would otherwise be rejected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from nsb import frames, units
from nsb.events import (
    Event,
    KpiSample,
    PlatformFacts,
    PlrEstimate,
    ResultReady,
    ScenarioSummary,
    SoakInterval,
    TaskFinished,
    TaskStarted,
    TrialDone,
    Verdict,
)
from nsb.outputs.influxdb import hop_points, session_points, soak_points
from nsb.outputs.influxdb import names as n
from nsb.trial import LatencyStats

RESERVED_KEYS = ("time",)  # InfluxDB 1.x refuses a field named time
_PLATFORM_TAGS = ("hostname", "kernel", "os_release", "cpu_model", "architecture",
                  "isolated_cpus")


@dataclass(frozen=True)
class InfluxPoint:
    measurement: str
    tags: Mapping[str, str]
    fields: Mapping[str, float]
    time_ns: int

    @property
    def series(self) -> tuple:
        return (self.measurement, tuple(sorted(self.tags.items())))

    def line(self) -> str:
        """InfluxDB line protocol, written by influxdb-client's Point."""
        from influxdb_client import Point, WritePrecision

        point = Point(self.measurement).time(self.time_ns, WritePrecision.NS)
        for key, value in self.tags.items():
            point.tag(key, value)
        for key, value in self.fields.items():
            point.field(key, value)
        return point.to_line_protocol()


def field_name(key) -> str:
    """A KPI key is the field name as it is (``p99.9`` stays): results and InfluxDB agree.

    Only names InfluxDB refuses change: ``time`` and names starting with ``_``
    (reserved in InfluxDB 2.x) get a ``kpi_`` prefix.
    """
    name = str(key)
    if not name or name in RESERVED_KEYS or name.startswith("_"):
        return f"kpi_{name}"
    return name


def number(value) -> float | None:
    """A finite float, booleans as 0/1; anything else (text, None, NaN) is no field."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    return None


def numeric_fields(values: Mapping, prefix: str = "") -> dict[str, float]:
    """Numbers of a mapping as fields; nested mappings flattened with ``_``."""
    fields: dict[str, float] = {}
    for key, value in values.items():
        name = field_name(f"{prefix}{key}")
        if isinstance(value, Mapping):
            fields.update(numeric_fields(value, f"{name}_"))
        elif (converted := number(value)) is not None:
            fields[name] = converted
    return fields


def latency_fields(latency: LatencyStats | None) -> dict[str, float]:
    if latency is None:
        return {}
    fields = {"latency_samples": float(latency.samples),
              n.latency_field("min"): latency.min_us, n.latency_field("avg"): latency.avg_us,
              n.latency_field("max"): latency.max_us}
    for key, value in latency.percentiles_us.items():
        fields[n.latency_field(key)] = value
    return {key: v for key, value in fields.items() if (v := number(value)) is not None}


class PointBuilder:
    """Turns the events of one task into points; remembers each scenario's profile.

    Two points of one series never share a timestamp (InfluxDB would keep only
    the last): a clash moves the later one on by a nanosecond.
    """

    def __init__(self, task_id: str, test_case: str, extra_tags: Mapping[str, str] | None = None,
                 task_args: Mapping | None = None):
        self.common = {**{str(k): str(v) for k, v in (extra_tags or {}).items()},
                       n.TASK_ID: task_id, n.TEST_CASE: test_case}
        if task_args:
            self.common[n.TASK_ARGS] = n.task_args_tag(task_args)
        self.scenarios: dict[str, dict[str, str]] = {}
        self._last_ns: dict[tuple, int] = {}

    @classmethod
    def for_task_file(cls, task_id: str, task_file: str | Path,
                      extra_tags: Mapping[str, str] | None = None,
                      task_args: Mapping | None = None) -> PointBuilder:
        return cls(task_id, Path(task_file).stem, extra_tags, task_args)

    def points(self, event: Event) -> list[InfluxPoint]:
        if isinstance(event, TaskStarted):
            self._learn_scenarios(event.scenarios)
            made = [self._task(event, "running", {"duration_s": 0.0,
                                                  "scenarios": float(len(self.scenarios))})]
        elif isinstance(event, TaskFinished):
            made = [self._task(event, event.status, {"duration_s": event.duration_s})]
        elif isinstance(event, PlatformFacts):
            made = [self._platform(event)]
        elif isinstance(event, TrialDone):
            made = [self._trial(event), *self._trial_ports(event), *self._hops(event),
                    *self._trial_chains(event), *self._trial_sessions(event)]
        elif isinstance(event, ResultReady):
            made = [self._result(event), *self._result_chains(event)]
        elif isinstance(event, KpiSample):
            made = self._kpis(event)
        elif isinstance(event, (SoakInterval, PlrEstimate)):
            made = [self._soak_or_plr(event)]
        else:
            return []
        return [self._unique(point) for point in made if point.fields]

    # ------------------------------------------------------------------ per event

    def _learn_scenarios(self, scenarios: tuple[ScenarioSummary, ...]) -> None:
        for scenario in scenarios:
            self.scenarios[scenario.name] = {"generator": scenario.generator,
                                             "profile": scenario.profile}

    def _tags(self, event: Event, **tags) -> dict[str, str]:
        merged = dict(self.common)
        if event.scenario:
            merged[n.SCENARIO] = event.scenario
        merged.update({key: str(value) for key, value in tags.items()
                       if value is not None and str(value) != ""})
        return merged

    def _point(self, measurement: str, event: Event, tags: dict, fields: dict) -> InfluxPoint:
        fields = {key: v for key, value in fields.items() if (v := number(value)) is not None}
        return InfluxPoint(measurement, tags, fields, round(event.timestamp * 1e9))

    def _task(self, event: Event, status: str, fields: dict) -> InfluxPoint:
        return self._point(n.TASK, event, self._tags(event, status=status), fields)

    def _platform(self, event: PlatformFacts) -> InfluxPoint:
        facts = event.facts or {}
        tags = {key: facts.get(key) for key in _PLATFORM_TAGS}
        for tool, version in (facts.get("versions") or {}).items():
            tags[f"{tool}_version"] = version
        fields = {key: value for key, value in facts.items()
                  if key not in _PLATFORM_TAGS and not isinstance(value, (Mapping, str))}
        fields[n.NICS] = float(len(facts.get("nics") or {}))
        return self._point(n.PLATFORM, event, self._tags(event, **{n.NODE: event.node}, **tags),
                           numeric_fields(fields))

    def _scenario_tags(self, event: Event) -> dict[str, str]:
        return self.scenarios.get(event.scenario, {})

    def _trial(self, event: TrialDone) -> InfluxPoint:
        result = event.result
        trial = result.trial
        tx_pps, rx_pps = result.tx_rate_pps, result.rx_rate_pps
        pct_per_pps = event.rate_pct / trial.rate_pps if trial.rate_pps > 0 else None
        fields = {
            **numeric_fields(result.extra),
            "iteration": event.iteration, "trial_index": event.trial_index,
            "duration_s": trial.duration_s, "flows": trial.flows,
            n.REQUESTED_RATE_PPS: trial.rate_pps, n.REQUESTED_RATE_PCT: event.rate_pct,
            n.TX_RATE_PPS: tx_pps, n.RX_RATE_PPS: rx_pps,
            "tx_rate_pct": tx_pps * pct_per_pps if pct_per_pps is not None else None,
            "rx_rate_pct": rx_pps * pct_per_pps if pct_per_pps is not None else None,
            "tx_mbps": units.pps_to_mbps(tx_pps, trial.frame_size),
            "rx_mbps": units.pps_to_mbps(rx_pps, trial.frame_size),
            "tx_packets": result.tx_packets, "rx_packets": result.rx_packets,
            "lost_packets": result.lost_packets, n.LOSS_PCT: result.loss_pct,
            "elapsed_s": result.elapsed_s, "generator_limited": result.generator_limited,
            "passed": event.verdict == Verdict.PASS,
            n.SEARCH_LOWER_PCT: event.lower_pct, n.SEARCH_UPPER_PCT: event.upper_pct,
            **latency_fields(result.latency),
        }
        tags = self._tags(event, **{n.FRAME_SIZE: trial.frame_size, n.VERDICT: event.verdict},
                          **self._scenario_tags(event))
        return self._point(n.TRIAL, event, tags, fields)

    def _trial_sessions(self, event: TrialDone) -> list[InfluxPoint]:
        """A stateful trial's connections: one nsb_trial_sessions point."""
        parts = session_points.trial_parts(event)
        if parts is None:
            return []
        tags, fields = parts
        return [self._point(n.TRIAL_SESSIONS, event,
                            self._tags(event, **tags, **self._scenario_tags(event)), fields)]

    def _hops(self, event: TrialDone) -> list[InfluxPoint]:
        """Where the trial's frames died, a point per loss along each direction."""
        scenario = self._scenario_tags(event)
        return [self._point(n.HOP, event, self._tags(event, **tags,
                                                     generator=scenario.get("generator")),
                            fields) for tags, fields in hop_points.parts(event)]

    def _trial_ports(self, event: TrialDone) -> list[InfluxPoint]:
        """Two points per generator port: what it counted sent (tx) and received (rx)."""
        trial = event.result.trial
        points = []
        for port, counters in sorted((event.result.ports or {}).items()):
            for direction in ("tx", "rx"):
                packets = number((counters or {}).get(f"{direction}_packets"))
                if packets is None:
                    continue
                pps = packets / trial.duration_s if trial.duration_s > 0 else None
                fields = {"packets": packets, n.PORT_RATE_PPS: pps,
                          "mbps": units.pps_to_mbps(pps, trial.frame_size) if pps else 0.0,
                          "iteration": event.iteration, "trial_index": event.trial_index}
                tags = self._tags(event, **{n.FRAME_SIZE: trial.frame_size,
                                            n.VERDICT: event.verdict, n.PORT: port,
                                            n.DIRECTION: direction},
                                  generator=self._scenario_tags(event).get("generator"))
                points.append(self._point(n.TRIAL_PORT, event, tags, fields))
        return points

    def _trial_chains(self, event: TrialDone) -> list[InfluxPoint]:
        """A point per service chain: its share of the trial (nsb.chains)."""
        result = event.result
        points = []
        for share in result.chains:
            record = share.record(result)
            fields = {key: record[key] for key in ("tx_packets", "rx_packets", n.LOSS_PCT,
                                                   n.TX_RATE_PPS)}
            fields.update(iteration=event.iteration, trial_index=event.trial_index,
                          **latency_fields(share.latency))
            tags = self._tags(event, **{n.FRAME_SIZE: result.trial.frame_size,
                                        n.VERDICT: event.verdict, n.CHAIN: share.chain},
                              generator=self._scenario_tags(event).get("generator"))
            points.append(self._point(n.TRIAL_CHAIN, event, tags, fields))
        return points

    def _result_chains(self, event: ResultReady) -> list[InfluxPoint]:
        """A point per service chain: its share of the answer, and whether it was the
        first to fail above it."""
        first = (event.extra.get("first_failing_chain") or {}).get("chain")
        points = []
        for share in event.extra.get("chains") or []:
            fields = {key: share[key] for key in (n.THROUGHPUT_PPS, "tx_packets",
                                                  "rx_packets", n.LOSS_PCT)}
            fields.update(iteration=event.iteration, failed_first=share["chain"] == first,
                          **numeric_fields(share.get("latency") or {}, "latency_"))
            tags = self._tags(event, **{n.FRAME_SIZE: event.frame_size,
                                        n.LIMITED_BY: event.limited_by,
                                        n.CHAIN: share["chain"]},
                              generator=self._scenario_tags(event).get("generator"))
            points.append(self._point(n.RESULT_CHAIN, event, tags, fields))
        return points

    def _result(self, event: ResultReady) -> InfluxPoint:
        stateful, kind = session_points.result_fields(event.extra)
        fields = {
            **numeric_fields({k: v for k, v in event.extra.items()
                              if k not in ("chains", "stateful")}),
            **stateful,
            "iteration": event.iteration, n.THROUGHPUT_PPS: event.throughput_pps,
            n.THROUGHPUT_MBPS: event.throughput_mbps, n.LINE_RATE_PCT: event.line_rate_pct,
            n.LOSS_PCT: event.loss_pct, "trials": event.trials,
            "tx_packets": event.tx_packets, "rx_packets": event.rx_packets,
            n.FRAME_BYTES: frames.avg_size(event.frame_size),
            **latency_fields(event.latency),
            n.WARNING_COUNT: len(event.warnings),
        }
        scenario = self._scenario_tags(event)
        tags = self._tags(event, **{n.FRAME_SIZE: event.frame_size,
                                    n.LIMITED_BY: event.limited_by},
                          profile=event.profile or scenario.get("profile"),
                          generator=scenario.get("generator"))
        point = self._point(n.RESULT, event, tags, fields)
        if kind:  # a string field: which answer the stateful fields are
            point = replace(point, fields={**point.fields, n.STATEFUL_KIND: kind})
        if event.warnings:  # a string field, in words
            point = replace(point, fields={**point.fields, n.WARNINGS: "; ".join(event.warnings)})
        if rates := (event.extra.get("mrr") or {}).get("receive_rates_pps"):
            # a string field: the trials as the trend takes them, to the last bit
            point = replace(point, fields={**point.fields,
                                           n.RECEIVE_RATES: ",".join(map(repr, rates))})
        return point

    def _kpis(self, event: KpiSample) -> list[InfluxPoint]:
        """One point per sample; ``source`` is ``vnf0``, ``nfvi:vnf0`` or ``node:sut``."""
        kind, _, name = event.source.partition(":")
        if not name:
            kind, name = "vnf", event.source
        tags = self._tags(event, **{n.NODE: event.node, n.SOURCE: event.source, n.KIND: kind},
                          vnf=name if kind in ("vnf", "nfvi") else None)
        fields = {**numeric_fields(event.kpis), "trial_index": event.trial_index}
        return [self._point(n.KPI, event, tags, fields)]

    def _soak_or_plr(self, event: SoakInterval | PlrEstimate) -> InfluxPoint:
        measurement, tags, fields = soak_points.parts(event)
        if isinstance(event, SoakInterval):
            fields.update(latency_fields(event.sample.latency))
        return self._point(measurement, event,
                           self._tags(event, **tags, **self._scenario_tags(event)), fields)

    def _unique(self, point: InfluxPoint) -> InfluxPoint:
        key = point.series
        last = self._last_ns.get(key)
        stamp = point.time_ns if last is None or point.time_ns > last else last + 1
        self._last_ns[key] = stamp
        if stamp == point.time_ns:
            return point
        return InfluxPoint(point.measurement, point.tags, point.fields, stamp)
