"""NSB's ``AgnosticVnf``: a DUT that is there already and that nsb does not manage.

Whatever forwards between the node's ports (an appliance, a switch, a program
someone else started) is measured as it is: nothing is started or stopped, it
is ready at once and has no KPIs of its own.
"""

from __future__ import annotations

from nsb.vnfs.base import Vnf


class AgnosticVnf(Vnf):
    """A DUT nsb only sends traffic through (NSB's AgnosticVnf): nothing started."""

    KEEPS_STATE = None  # what it holds, nsb can neither reset nor count
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "nfvi_enable": {"description": "NSB's; nsb samples NFVi KPIs anyway",
                            "type": "boolean"},
        },
    }

    def describe(self) -> dict:
        info = super().describe()
        info["managed"] = "no: nothing is started or stopped on the node"
        return info

    def instantiate(self) -> None:
        return None

    def wait_until_ready(self, timeout: float) -> None:
        return None

    def terminate(self) -> None:
        return None
