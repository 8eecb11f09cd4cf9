"""NSB's packet definitions (uplink_N/downlink_N) and framesize weights as nsb reads
them: PacketSpecs, byte-weighted frame mixes, and one located line for a bad value."""

import pytest

from nsb import frames
from nsb.errors import TaskError
from nsb.frames import FrameMix
from nsb.packets import Direction, IpRange, PacketSpec, PortRange
from nsb.task import framesize_mix, packet_profile, render, traffic_options, yaml_lines
from nsb.task.documents import Where

BLOCK = """\
uplink_0:
  ipv4:
    id: 1
    outer_l2:
      framesize: {64B: "100", 128B: "0"}
    outer_l3v4:
      proto: "udp"
      srcip4: "10.0.2.1-10.0.2.255"
      dstip4: "10.0.3.1-10.0.3.255"
      count: "10"
      ttl: 32
      dscp: 0
    outer_l4:
      srcport: "1234-4321"
      dstport: "2001"
      count: "10"
"""


def read(text: str, file: str = "profile.yaml"):
    doc = yaml_lines.parse(text, file)
    return packet_profile.read(doc.data, Where(doc, ()))


def error_of(text: str) -> str:
    with pytest.raises(TaskError) as caught:
        read(text)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_definition_is_a_packet_spec():
    profile = read(BLOCK)
    assert profile.packets == (PacketSpec(
        name="uplink_0", pair=0, direction=Direction.UPLINK, ip_version=4, proto="udp",
        src_ip=IpRange("10.0.2.1", "10.0.2.255"), dst_ip=IpRange("10.0.3.1", "10.0.3.255"),
        ttl=32, dscp=0, src_port=PortRange(1234, 4321), dst_port=PortRange(2001, 2001),
        flows=10),)
    assert profile.frame == 64  # one size at 100 % is a plain frame size


def test_l2_fields_qinq_tcp_and_the_tos_byte():
    profile = read("""\
downlink_1:
  ipv4:
    outer_l2:
      framesize: {128B: 100}
      srcmac: "00:00:00:00:00:0A"
      dstmac: "00:00:00:00:00:0b"
      QinQ:
        S-VLAN: {id: 128, priority: 0, cfi: 0}
        C-VLAN: {id: "512-520", priority: 0, cfi: 0}
    outer_l3v4: {proto: tcp, srcip4: 1.1.1.1, dstip4: 2.2.2.2, dscp: 32}
""")
    (spec,) = profile.packets
    assert (spec.name, spec.pair, spec.direction) == ("downlink_1", 1, Direction.DOWNLINK)
    assert spec.src_mac == "00:00:00:00:00:0a" and spec.dst_mac == "00:00:00:00:00:0b"
    assert spec.vlans == (128, 512)  # outer first; NSB's random id of a range: its first
    assert spec.proto == "tcp"
    assert spec.dscp == 8  # NSB writes 32 into the ToS byte
    assert spec.ttl == packet_profile.SCAPY_TTL  # what NSB's frames carry without one
    assert spec.flows == 1 and profile.frame == 128


def test_ipv6_definition():
    (spec,) = read("""\
uplink_0:
  ipv6:
    outer_l2: {framesize: {78B: 100}}
    outer_l3v6: {proto: udp, srcip6: "2001:db8::1-2001:db8::ff", dstip6: "2001:db8:1::1",
                 hlim: 10, tc: 4}
    outer_l4: {srcport: 1000, dstport: 2000}
""").packets
    assert spec.ip_version == 6 and spec.ttl == 10 and spec.dscp == 1
    assert spec.src_ip == IpRange("2001:db8::1", "2001:db8::ff")
    assert spec.flows is None  # NSB's IPv6 ranges are random over the range, no count


def test_count_is_capped_by_the_widest_range():
    text = BLOCK.replace('count: "10"', 'count: "100000"')
    (spec,) = read(text).packets
    assert spec.flows == 4321 - 1234  # NSB: at most last - first values per range


@pytest.mark.parametrize("old, new, fragments", [
    ('srcip4: "10.0.2.1-10.0.2.255"', 'srcip4: "10.0.2.9-10.0.2.1"',
     ["profile.yaml:8: uplink_0.ipv4.outer_l3v4.srcip4:", "runs backwards"]),
    ('srcip4: "10.0.2.1-10.0.2.255"', 'srcip4: "10.0.2.1 to 10.0.2.9"',
     ["uplink_0.ipv4.outer_l3v4.srcip4:", "is not an IPv4 address or a range"]),
    ('dstport: "2001"', 'dsrport: "2001"',
     ["profile.yaml:15: uplink_0.ipv4.outer_l4.dsrport:", "did you mean 'dstport'"]),
    ('srcport: "1234-4321"', 'srcport: "1234-70000"', ["outer_l4.srcport:", "0-65535"]),
    ('proto: "udp"', 'proto: "icmp"', ["outer_l3v4.proto:", "not supported yet: protocol"]),
    ('dscp: 0', 'dscp: 33', ["outer_l3v4.dscp:", "ECN"]),
    ('dscp: 0', 'dscp: "8-16"', ["outer_l3v4.dscp:", "not supported yet: a range"]),
    ('64B: "100"', '64x: "100"', ["outer_l2.framesize.64x:", "not a frame size"]),
    ('64B: "100"', '64B: "lots"', ["outer_l2.framesize.64B:", "whole number of percent"]),
    ('64B: "100"', '32B: "100"', ["outer_l2.framesize.32B:", "outside 64-9216"]),
    ('      count: "10"\n      ttl', '      count: "0"\n      ttl',
     ["outer_l3v4.count:", "a flow count"]),
    ('    outer_l4:\n', '    inner_l4: {}\n    outer_l4:\n',
     ["uplink_0.ipv4.inner_l4:", "unknown key 'inner_l4'"]),
])
def test_a_bad_value_is_one_located_line(old, new, fragments):
    assert old in BLOCK
    message = error_of(BLOCK.replace(old, new))
    for fragment in fragments:
        assert fragment in message, message


def test_directions_with_different_mixes_are_refused():
    other = BLOCK.replace("uplink_0", "downlink_0").replace('64B: "100"', '1518B: "100"')
    message = error_of(BLOCK + other)
    assert "downlink_0.ipv4.outer_l2.framesize" in message
    assert "not supported yet: frame sizes that differ from uplink_0's" in message


def test_different_l3_and_l4_counts_are_refused():
    message = error_of(BLOCK.replace('      count: "10"\n', '      count: "20"\n', 1))
    assert "outer_l4.count" in message and "differs from the IP count 20" in message


def test_two_blocks_in_one_direction_are_refused():
    message = error_of("uplink_0:\n  ipv4: {}\n  ipv6: {}\n")
    assert "uplink_0:" in message and "expected one packet block" in message


# -- frame-size weights ------------------------------------------------------------------

def test_weights_are_normalised_as_nsb_does():
    assert framesize_mix.normalized({64: 1, 128: 3}) == {64: 25.0, 128: 75.0}
    assert framesize_mix.normalized({64: 0, 1518: 0}) == {64: 100.0}  # all 0: NSB's 64 B
    assert framesize_mix.normalized({64: 50, 128: 0}) == {64: 100.0}


def test_a_single_size_is_a_plain_frame_size():
    assert framesize_mix.frame_of({512: 100.0}) == 512


@pytest.mark.parametrize("percent", [
    {64: 50.0, 1518: 50.0},
    {64: 70.0, 1518: 30.0},
    {64: 58.33, 594: 33.33, 1518: 8.34},
    {64: 10.0, 128: 20.0, 256: 30.0, 512: 20.0, 1024: 10.0, 1518: 10.0},
    {64: 1.0, 9000: 99.0},
])
def test_a_mix_sends_the_bandwidth_shares_nsb_gives(percent):
    """NSB gives each size weight % of the line in bytes (TRex's percentage): the frame
    counts are in proportion to weight / (size + 20), within one 128-frame cycle."""
    mix = framesize_mix.frame_of(percent)
    assert isinstance(mix, FrameMix) and len(mix.sequence) <= frames.MAX_CYCLE
    shares = framesize_mix.bandwidth_shares(mix.weights)
    for size, pct in percent.items():
        assert shares[size] == pytest.approx(pct / 100, abs=0.01), (size, shares)
    best_possible = _best_error(percent)
    error = max(abs(shares[s] - percent[s] / 100) for s in percent)
    assert error == pytest.approx(best_possible)


def _best_error(percent):
    """Brute force over every cycle of two sizes (the closest any cycle gets)."""
    if len(percent) != 2:
        return max(abs(b - percent[s] / 100) for s, b in framesize_mix.bandwidth_shares(
            framesize_mix.frame_counts(percent)).items())
    small, large = sorted(percent)
    best = 1.0
    for n_small in range(1, 128):
        for n_large in range(1, 129 - n_small):
            shares = framesize_mix.bandwidth_shares({small: n_small, large: n_large})
            best = min(best, abs(shares[small] - percent[small] / 100))
    return best


def test_byte_weighting_favours_small_frames():
    counts = framesize_mix.frame_counts({64: 50.0, 1518: 50.0})
    assert counts == {64: 55, 1518: 3}  # (1/84) : (1/1538) is 18.3 : 1


# -- allowed_drop_rate -------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("0.0001 - 0.0001", (0.0001, 0.0001)),
    ("0.0001 - 0.001", (0.0001, 0.001)),
    ("0.001 - 0.0001", (0.0001, 0.001)),  # NSB sorts them
    ("0.5", (0.5, 0.5)),
    (0.2, (0.2, 0.2)),
    (0, (0.0, 0.0)),
])
def test_allowed_drop_rate(value, expected):
    assert traffic_options.drop_rate(value) == expected


@pytest.mark.parametrize("value", ["a - b", "1 - 2 - 3", "", "150", True, None, [1, 2]])
def test_allowed_drop_rate_refuses(value):
    with pytest.raises(ValueError):
        traffic_options.drop_rate(value)


def test_none_renders_as_yaml_null_as_yardstick_does():
    """``get(extra_args, 'frame_rate' or 100)`` is None: Yardstick prints ``~``."""
    text = render.render("rate: {{ get(extra_args, 'frame_rate' or 100) }}\n", "p.yaml",
                         {"extra_args": {}, "get": lambda obj, key, *d: obj.get(key, *d)})
    assert yaml_lines.parse(text, "p.yaml").data == {"rate": None}
