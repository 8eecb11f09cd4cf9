"""trafgen really sends the configured frame size and number of distinct flows."""

import json
import subprocess
import sys

import pytest

from nsb import frames
from nsb.executors.local import NetnsExecutor
from nsb.vnfs import trafgen_config, trial_frames
from tests.conftest import requires_root

CAPTURE = r"""
import json, socket, sys
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
try:
    sock.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE
except OSError:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
sock.bind((sys.argv[1], 3)); sock.settimeout(3)
print("ready", flush=True)
seen, sizes, count = set(), set(), 0
try:
    while count < int(sys.argv[2]):
        frame = sock.recv(4096)
        if frame[12:14] != b"\x08\x00" or frame[23] != 17:
            continue
        count += 1
        sizes.add(len(frame))
        seen.add((frame[26:30].hex(), frame[34:36].hex()))
except socket.timeout:
    pass
print(json.dumps({"count": count, "flows": len(seen), "sizes": sorted(sizes)}))
"""


@pytest.fixture
def veth_pair():
    requires_root()
    ns = "nsb-flowtest"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:  # no IPv6: its router solicitations would be counted as received frames
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                        "net.ipv6.conf.all.disable_ipv6=1",
                        "net.ipv6.conf.default.disable_ipv6=1"], check=True)
        for cmd in (["link", "add", "fa", "type", "veth", "peer", "name", "fb"],
                    ["link", "set", "fa", "up"], ["link", "set", "fb", "up"]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "delete", ns])


def _captured_while_trafgen_sends(ns: str, capture_script: str, config, packets: int):
    """What ``capture_script`` printed on fb while trafgen sent ``packets`` frames of
    ``config`` on fa (5000 per second)."""
    capture = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", capture_script,
                                "fb", str(packets)], stdout=subprocess.PIPE, text=True)
    assert capture.stdout.readline().strip() == "ready"
    subprocess.run(["ip", "netns", "exec", ns, "trafgen", "--in", str(config), "--out",
                    "fa", "--cpus", "1", "--no-sock-mem", "--notouch-irq", "--rate", "5000pps",
                    "--num", str(packets)], check=True, capture_output=True)
    return json.loads(capture.communicate(timeout=30)[0])


@pytest.mark.parametrize("frame,flows", [(64, 1), (512, 100), (1518, 1000)])
def test_frames_and_flows_on_the_wire(veth_pair, tmp_path, frame, flows):
    config = tmp_path / "t.cfg"
    config.write_text(trafgen_config.packet_config(frame, "02:00:00:00:00:01",
                                                   "02:00:00:00:00:02", "10.0.1.1",
                                                   "10.0.2.2", flows))
    packets = 2 * flows + 10
    report = _captured_while_trafgen_sends(veth_pair, CAPTURE, config, packets)
    assert report["count"] == packets
    assert report["flows"] == flows
    assert report["sizes"] == [frame - 4]  # on a veth the FCS is not there


ORDER = r"""
import json, socket, sys
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
sock.bind((sys.argv[1], 3)); sock.settimeout(3)
print("ready", flush=True)
sizes = []
try:
    while len(sizes) < int(sys.argv[2]):
        frame = sock.recv(16384)
        if frame[12:14] == b"\x08\x00" and frame[23] == 17:
            sizes.append(len(frame))
except socket.timeout:
    pass
print(json.dumps(sizes))
"""


@pytest.mark.parametrize("mix", [frames.from_weights(frames.SIMPLE_IMIX),
                                 frames.from_genome("aabg")])
def test_a_mix_is_sent_in_its_order_cycle_after_cycle(veth_pair, tmp_path, mix):
    """trafgen sends a configuration's packets round robin: the wire carries the
    mix's sequence, so every cycle has the mix's proportions."""
    config = tmp_path / "t.cfg"
    config.write_text(trafgen_config.mix_config(mix.sequence, "02:00:00:00:00:01",
                                                "02:00:00:00:00:02", "10.0.1.1", "10.0.2.2", 1))
    packets = 5 * len(mix.sequence)
    sizes = _captured_while_trafgen_sends(veth_pair, ORDER, config, packets)
    assert sizes == [size - 4 for size in mix.sequence] * 5  # no FCS on a veth


SEND = r"""
import socket, struct, sys
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((sys.argv[1], 0))
for spec in sys.argv[2:]:
    port, count = map(int, spec.split("x"))
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]),
                     bytes([10, 0, 0, 2]))
    frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + \
        struct.pack("!HHHH", 1024, port, 8, 0) + bytes(18)
    for _ in range(count):
        sock.send(frame)
"""


def _send(ns: str, *specs: str) -> None:
    subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", SEND, "fa", *specs],
                   check=True)


def test_frames_of_an_earlier_trial_are_not_counted_in_the_next(veth_pair):
    """The nftables counter counts only frames with the armed trial's UDP port, so
    frames a slow DUT delivers late are counted by no trial."""
    counter = trial_frames.TrialFrames(NetnsExecutor(veth_pair), ["fb"], "nsb_test")
    counter.install()
    try:
        assert counter.by_port
        first, second = trial_frames.trial_port(1), trial_frames.trial_port(2)
        counter.arm(first)
        _send(veth_pair, f"{first}x5", "1024x2")
        assert counter.read() == {"fb": 5}
        counter.arm(second)
        _send(veth_pair, f"{first}x3", f"{second}x4")  # 3 late frames of the first trial
        assert counter.read() == {"fb": 4}
    finally:
        counter.remove()
    tables = subprocess.run(["ip", "netns", "exec", veth_pair, "nft", "list", "tables"],
                            capture_output=True, text=True).stdout
    assert "nsb_test" not in tables


def test_without_nft_every_received_frame_counts(veth_pair):
    class NoNft(NetnsExecutor):
        def which(self, binary):
            return None if binary == "nft" else super().which(binary)

    counter = trial_frames.TrialFrames(NoNft(veth_pair), ["fb"], "nsb_test")
    counter.install()
    assert not counter.by_port and "link counters" in counter.method
    counter.arm(trial_frames.trial_port(1))
    _send(veth_pair, "1024x2", f"{trial_frames.trial_port(1)}x3")
    assert counter.read() == {"fb": 5}
