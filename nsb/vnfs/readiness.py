"""Waiting until a scenario's VNFs and generator are ready, and saying why not.

A VNF's readiness often hangs on another: testpmd's memif link comes up only once
TRex has connected. When one gives up, the ones after it are asked too (briefly), so
the error names the peer that never came up instead of only the one left waiting.
"""

from __future__ import annotations

from collections.abc import Sequence

from nsb.errors import RunError
from nsb.vnfs.base import Vnf

# how long each VNF after the one that gave up gets to say whether it is ready
PEER_CHECK_S = 5.0


def wait_all_ready(vnfs: Sequence[Vnf], timeout: float) -> None:
    """Wait for each in order (each within ``timeout``); on the first RunError, ask the
    rest and raise one error that names what each of them said."""
    for index, vnf in enumerate(vnfs):
        try:
            vnf.wait_until_ready(timeout)
        except RunError as error:
            peers = _peer_states(vnfs[index + 1:], min(PEER_CHECK_S, timeout))
            if not peers:
                raise
            raise RunError(f"{error}\nmeanwhile:\n" + "\n".join(peers)) from error


def _peer_states(vnfs: Sequence[Vnf], timeout: float) -> list[str]:
    states = []
    for vnf in vnfs:
        try:
            vnf.wait_until_ready(timeout)
        except RunError as error:
            states.append(f"  {vnf.name}: not ready either: {error}")
        else:
            states.append(f"  {vnf.name}: ready")
    return states
