"""NSB's PROX IRQ test: the stats PROX is asked for and the KPIs made of them."""

import pytest

from nsb.vnfs.prox.client import ProxClient, ProxError
from nsb.vnfs.prox.irq import irq_kpis
from tests.unit.test_prox_client import ReplayedProx

PATHS = ",".join(["task.core(1).task(0).max_irq"]
                 + [f"task.core(1).task(0).irq({i})" for i in range(13)])


def test_irq_stats_ask_for_max_irq_and_thirteen_buckets():
    reply = b"37,900000,50,4,3,2,1,0,0,0,1,1,0,2\n"
    sock = ReplayedProx({f"stats {PATHS}": reply})
    stats = ProxClient(sock, "vnf__0", timeout_s=0.2).irq_stats(1, 0)
    assert sock.sent == [f"stats {PATHS}"]
    assert stats["max_irq"] == 37 and stats["bucket_0"] == 900000 and stats["bucket_12"] == 2
    assert stats["overflow"] == 1 + 1 + 0 + 2  # NSB's: buckets 9-12, gaps of 10 ms or more


def test_an_unknown_core_is_an_error_not_a_huge_count():
    unknown = str(2**64 - 1).encode()
    reply = b",".join([unknown] * 14) + b"\n"
    sock = ReplayedProx({f"stats {PATHS}": reply})
    with pytest.raises(ProxError, match=r"no value for task.core\(1\).task\(0\).max_irq"):
        ProxClient(sock, "vnf__0", timeout_s=0.2).irq_stats(1, 0)


def test_kpis_are_rates_per_second_without_zero_buckets():
    stats = {1: {"max_irq": 37, "bucket_0": 900_000, "bucket_1": 50, "bucket_2": 0,
                 "overflow": 4}}
    assert irq_kpis(stats, 2.0) == {"core_1.max_irq": 37.0, "core_1.bucket_0": 450_000.0,
                                    "core_1.bucket_1": 25.0, "core_1.overflow": 2.0}
