"""NSB's ProxDuration runner: a time budget, as Duration, with NSB's sampling options.

``duration`` caps the run as in NSB. ``sampled: yes`` made NSB collect the VNFs'
KPIs every ``interval`` seconds; nsb samples NFVi KPIs on its own interval
(``nfvi_interval`` in nsb.conf) and the VNFs' after every trial, so ``sampled``
and ``interval`` change nothing here. ``confirmation`` is read by NSB's binary
search profile (a rate passes only when that many repeats pass too); nsb's
Yardstick loader hands it to that profile.
"""

from __future__ import annotations

from nsb.runners.duration import DurationRunner


class ProxDurationRunner(DurationRunner):
    """ProxDuration: NSB's Duration runner for PROX tasks (sampled, confirmation)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **DurationRunner.OPTIONS_SCHEMA["properties"],
            "interval": {"description": "NSB's sampling interval; nsb samples on its own: changes "
                                        "nothing",
                         "type": "number", "minimum": 0, "default": 1},
            "sampled": {"description": "NSB's KPI sampling; nsb samples on its own: changes "
                                       "nothing",
                        "type": "boolean", "default": False},
            "confirmation": {"description": "repeats a passing rate must pass too (given to the "
                                            "binsearch profile)",
                             "type": "integer", "minimum": 0, "default": 0},
        },
    }
