"""The PROX client against replies recorded from a real PROX (transcript-main.txt)."""

import ast
from pathlib import Path

import pytest

from nsb.vnfs.prox.client import ProxClient, ProxError

TRANSCRIPT = Path(__file__).resolve().parent.parent / "data/prox-reference/transcript-main.txt"


def recorded() -> list[tuple[str, bytes]]:
    """(command, raw reply) pairs in the order they were recorded."""
    pairs, command = [], None
    for line in TRANSCRIPT.read_text().splitlines():
        if line.startswith(">>> "):
            command = ast.literal_eval(line[4:]).rstrip("\n")
        elif line.startswith("<<< ") and command is not None:
            pairs.append((command, ast.literal_eval(line[4:])))
            command = None
    return pairs


class ReplayedProx:
    """Socket double: answers each command with the next recorded reply to it.

    ``echo`` is answered as PROX does; ``overrides`` replace replies to test
    malformed or missing answers.
    """

    def __init__(self, overrides: dict[str, bytes] | None = None):
        self.replies: dict[str, list[bytes]] = {}
        for command, reply in recorded():
            self.replies.setdefault(command, []).append(reply)
        self.overrides = overrides or {}
        self.sent: list[str] = []
        self.pending = b""
        self.closed = False

    def sendall(self, data: bytes) -> None:
        for command in data.decode().splitlines():
            self.sent.append(command)
            if command.startswith("echo "):
                self.pending += command[5:].encode() + b"\n"
            elif command in self.overrides:
                self.pending += self.overrides[command]
            elif self.replies.get(command):
                self.pending += self.replies[command].pop(0)

    def settimeout(self, _timeout) -> None:
        pass

    def recv(self, size: int) -> bytes:
        if not self.pending:
            raise TimeoutError
        chunk, self.pending = self.pending[:size], self.pending[size:]
        return chunk

    def close(self) -> None:
        self.closed = True


def client(**overrides) -> tuple[ProxClient, ReplayedProx]:
    sock = ReplayedProx({k.replace("_", " "): v for k, v in overrides.items()})
    return ProxClient(sock, "tg__0", timeout_s=0.2), sock


def test_transcript_has_replies():
    assert len(recorded()) > 20


def test_version_decodes_prox_and_dpdk():
    prox, _ = client()
    assert prox.version() == ("22.12", "22.11.11")


def test_tot_stats_fields():
    prox, _ = client()
    stats = prox.tot_stats()
    assert (stats.rx, stats.tx, stats.tsc, stats.hz) == (0, 0, 18859291375387, 2_000_000_000)
    stats = prox.tot_stats()  # the next one recorded, while traffic ran
    assert (stats.rx, stats.tx) == (693758, 769149)


def test_state_commands_wait_for_the_echo_barrier():
    prox, sock = client()
    prox.reset_stats()
    prox.set_pkt_size(1, 0, 64)
    prox.set_speed(1, 0, 1)
    assert sock.sent[:2] == ["reset stats", "echo nsb-sync-1"]
    assert "pkt_size 1 0 60" in sock.sent  # PROX takes the size without FCS
    assert "speed 1 0 1" in sock.sent


def test_a_reply_to_a_state_command_is_an_error():
    prox, _ = client(start_all=b"error: something\n")
    with pytest.raises(ProxError, match="unexpected reply to 'start all': 'error: something'"):
        prox.start()


def test_core_and_port_stats():
    prox, _ = client()
    prox.tot_stats()  # the transcript answers in order
    core = prox.core_stats(1, 0)
    assert (core.rx, core.tx, core.drop) == (0, 1799874, 0)
    ports = prox.multi_port_stats([0])
    assert ports[0].rx == 1364974 and ports[0].tx == 1508501


def test_lat_all_stats_reads_128_buckets():
    prox, _ = client()
    stats, buckets = prox.lat_all_stats(1, 1)
    assert (stats.min_us, stats.max_us, stats.avg_us) == (12, 8259, 1687)
    assert len(buckets) == 128
    assert buckets[11] == 17 and buckets[127] == 88052


def test_error_reply_names_command_and_text():
    prox, _ = client(lat_stats_1_1=b"error: core 1 task 1 is not measuring latency\n")
    with pytest.raises(ProxError) as caught:
        prox.lat_stats(1, 1)
    assert "'lat stats 1 1'" in str(caught.value)
    assert "is not measuring latency" in str(caught.value)


def test_malformed_reply_is_an_error_not_a_zero():
    prox, _ = client(tot_stats=b"594068,1150032\n")
    with pytest.raises(ProxError, match=r"malformed reply to 'tot stats': '594068,1150032' "
                                        r"\(expected 4 integers: rx,tx,last_tsc,tsc_hz\)"):
        prox.tot_stats()


def test_non_numeric_field_is_an_error():
    prox, _ = client(tot_stats=b"a,b,c,d\n")
    with pytest.raises(ProxError, match="malformed"):
        prox.tot_stats()


def test_missing_reply_times_out_with_the_command():
    prox, _ = client(port_stats_3=b"")
    with pytest.raises(ProxError, match="did not answer 'port_stats 3' within 0.2 s"):
        prox.query("port_stats 3")


def test_truncated_histogram_is_an_error():
    prox, _ = client(lat_all_stats_1_1=b"12,8259,1687,11,12269,1,2000000000,1,1,0,0,0\n"
                                       b"Bucket [0]: 0\nBucket [1]: x\n")
    with pytest.raises(ProxError, match=r"histogram line 1 .*'Bucket \[1\]: x'"):
        prox.lat_all_stats(1, 1)


def test_out_of_range_settings_are_refused_before_sending():
    prox, sock = client()
    with pytest.raises(ProxError, match="0..1000"):
        prox.set_speed(1, 0, 1001)
    with pytest.raises(ProxError, match="minimum 38"):
        prox.set_pkt_size(1, 0, 30)
    assert sock.sent == []


def test_port_stats_has_twelve_named_fields():
    prox, _ = client()
    prox.port_stats(0)  # the idle one comes first in the transcript
    stats = prox.port_stats(0)
    assert stats["rx_pkts_diff"] == 132996 and stats["tx_pkts_diff"] == 147938
    assert stats["rx_tot"] == 960018 and stats["tx_tot"] == 1065186
    assert stats["last_tsc"] - stats["prev_tsc"] == 2000105618
