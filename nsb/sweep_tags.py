"""A sweep point on the results it measured: ``result["sweep"] = {"pmd_cores": 2}``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from nsb.events import Event, ResultReady


def tagging(emit: Callable[[Event], None], point: Mapping) -> Callable[[Event], None]:
    """``emit`` that adds ``point`` to every result (unchanged outside a sweep)."""
    if not point:
        return emit
    tag = dict(point)

    def tagged(event: Event) -> None:
        if isinstance(event, ResultReady):
            event = replace(event, extra={**event.extra, "sweep": dict(tag)})
        emit(event)

    return tagged
