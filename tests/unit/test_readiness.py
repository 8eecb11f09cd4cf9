"""A VNF left waiting for its peer names the peer's own trouble."""

from __future__ import annotations

import pytest

from nsb.errors import RunError
from nsb.vnfs.readiness import wait_all_ready


class FakeVnf:
    def __init__(self, name: str, problem: str = ""):
        self.name = name
        self.problem = problem
        self.asked: list[float] = []

    def wait_until_ready(self, timeout: float) -> None:
        self.asked.append(timeout)
        if self.problem:
            raise RunError(f"{self.name}: {self.problem}")


def test_all_ready_are_each_asked_once_with_the_timeout():
    vnfs = [FakeVnf("dut"), FakeVnf("tg")]
    wait_all_ready(vnfs, 30.0)
    assert [v.asked for v in vnfs] == [[30.0], [30.0]]


def test_a_dut_waiting_for_its_link_names_the_generator_that_never_came_up():
    dut = FakeVnf("testpmd0", "port 0 (xe0) link up")
    tg = FakeVnf("tg0", "TRex's RPC did not answer")
    with pytest.raises(RunError) as raised:
        wait_all_ready([dut, FakeVnf("ovs"), tg], 60.0)
    text = str(raised.value)
    assert text.splitlines()[0] == "testpmd0: port 0 (xe0) link up"
    assert "  ovs: ready" in text
    assert "  tg0: not ready either: tg0: TRex's RPC did not answer" in text
    assert tg.asked == [5.0]  # a short look, not another full timeout


def test_the_last_one_failing_is_its_own_error():
    tg = FakeVnf("tg0", "gone")
    with pytest.raises(RunError, match="^tg0: gone$"):
        wait_all_ready([FakeVnf("dut"), tg], 10.0)
