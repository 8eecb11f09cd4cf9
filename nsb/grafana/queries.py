"""InfluxQL panel queries for the Foundation SDK, and the InfluxQL the dashboards use.

grafana-foundation-sdk has no builder for InfluxDB queries, so this module adds
one as an SDK data query variant (``cogvariants.Dataquery``): a raw InfluxQL
query in the target shape Grafana's InfluxDB data source saves (``refId``,
``datasource``, ``query``, ``rawQuery``, ``resultFormat``, ``alias``). InfluxQL
works with InfluxDB 1.x, with 2.x through its v1-compatible query API (the bucket
as database) and with 3.x.
"""

from __future__ import annotations

import typing

from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import runtime as cogruntime
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models import dashboard as dm

from nsb.grafana.datasource import DATASOURCE_TYPE
from nsb.outputs.influxdb import names as m
from nsb.outputs.influxdb.influxql import ident

TIME_SERIES = "time_series"
TABLE = "table"


class InfluxQLQuery(cogvariants.Dataquery):
    """A raw InfluxQL target of a panel."""

    def __init__(self, ref_id: str = "", query: str = "", result_format: str = TIME_SERIES,
                 alias: str | None = None, datasource: dm.DataSourceRef | None = None,
                 hide: bool | None = None) -> None:
        self.ref_id = ref_id
        self.query = query
        self.result_format = result_format
        self.alias = alias
        self.datasource = datasource
        self.hide = hide

    def to_json(self) -> dict[str, object]:
        payload: dict[str, object] = {"refId": self.ref_id, "query": self.query,
                                      "rawQuery": True, "resultFormat": self.result_format}
        if self.alias is not None:
            payload["alias"] = self.alias
        if self.datasource is not None:
            payload["datasource"] = self.datasource.to_json()
        if self.hide is not None:
            payload["hide"] = self.hide
        return payload

    @classmethod
    def from_json(cls, data: dict[str, typing.Any]) -> InfluxQLQuery:
        datasource = data.get("datasource")
        return cls(ref_id=data.get("refId", ""), query=data.get("query", ""),
                   result_format=data.get("resultFormat", TIME_SERIES),
                   alias=data.get("alias"),
                   datasource=dm.DataSourceRef.from_json(datasource) if datasource else None,
                   hide=data.get("hide"))


class InfluxQL(cogbuilder.Builder[cogvariants.Dataquery]):
    """Builder of an :class:`InfluxQLQuery`, used like the SDK's own query builders."""

    def __init__(self, query: str) -> None:
        self._internal = InfluxQLQuery(query=query)

    def build(self) -> InfluxQLQuery:
        return self._internal

    def ref_id(self, ref_id: str) -> typing.Self:
        self._internal.ref_id = ref_id
        return self

    def alias(self, alias: str) -> typing.Self:
        """Series names: ``$col``, ``$tag_<key>``, ``$measurement``."""
        self._internal.alias = alias
        return self

    def table(self) -> typing.Self:
        self._internal.result_format = TABLE
        return self

    def datasource(self, datasource: dm.DataSourceRef) -> typing.Self:
        self._internal.datasource = datasource
        return self


class InfluxQLAnnotationTarget:
    """The target of an InfluxQL annotation query, in the shape Grafana's InfluxDB data
    source saves it (its annotation editor: ``query``, ``rawQuery``, ``textColumn``,
    ``tagsColumn``, ``fromAnnotations``); the query must hold ``$timeFilter``."""

    def __init__(self, query: str, text_column: str, tags_column: str = "") -> None:
        self.query = query
        self.text_column = text_column
        self.tags_column = tags_column

    def to_json(self) -> dict[str, object]:
        return {"refId": "Anno", "query": self.query, "rawQuery": True,
                "fromAnnotations": True, "textColumn": self.text_column,
                "tagsColumn": self.tags_column}


class InfluxQLAnnotation(cogbuilder.Builder[InfluxQLAnnotationTarget]):
    """Builder of an annotation's InfluxQL target, for ``AnnotationQuery.target``."""

    def __init__(self, query: str, text_column: str, tags_column: str = "") -> None:
        if "$timeFilter" not in query:
            raise ValueError(f"an annotation query needs $timeFilter: {query}")
        self._internal = InfluxQLAnnotationTarget(query, text_column, tags_column)

    def build(self) -> InfluxQLAnnotationTarget:
        return self._internal


cogruntime.register_dataquery_variant(
    cogruntime.DataqueryConfig(identifier=DATASOURCE_TYPE, from_json_hook=InfluxQLQuery.from_json))


# --- InfluxQL -------------------------------------------------------------------------------

def matches(tag: str, variable: str) -> str:
    """``"tag" =~ /^$variable$/``: Grafana expands a multi-value variable to (a|b)."""
    return f"{ident(tag)} =~ /^${variable}$/"


def field(name: str) -> str:
    return ident(name)


def mean(name: str) -> str:
    return f"mean({ident(name)})"


def tag_values(measurement: str, key: str, where: list[str] = ()) -> str:
    """The query of a template variable: the values of one tag."""
    text = f"SHOW TAG VALUES FROM {ident(measurement)} WITH KEY = {ident(key)}"
    if where:
        text += " WHERE " + " AND ".join(where)
    return text


def task_filter(extra: list[str] = ()) -> list[str]:
    """The conditions every panel starts with: the selected task(s) and scenario."""
    return [matches(m.TASK_ID, "task_id"), matches(m.SCENARIO, "scenario"), *extra]
