"""OVS's port counters as the ovs VNF reports them (output of OVS 3.1 in nsb's guest)."""

from __future__ import annotations

from nsb.vnfs.ovs.stats import port_counters, port_kpis

DUMP_PORTS = """OFPST_PORT reply (OF1.3) (xid=0x2): 3 ports
  port  xe0: rx pkts=2034, bytes=130176, drop=3, errs=0, frame=?, over=?, crc=?
           tx pkts=0, bytes=0, drop=0, errs=0, coll=?
           duration=31.958s
  port LOCAL: rx pkts=0, bytes=0, drop=0, errs=0, frame=0, over=0, crc=0
           tx pkts=7, bytes=0, drop=?, errs=0, coll=0
           duration=31.942s
  port  "br0-1b": rx pkts=0, bytes=0, drop=0, errs=0, frame=?, over=?, crc=?
           tx pkts=2031, bytes=129984, drop=1, errs=0, coll=?
           duration=31.922s
"""


def test_dump_ports_gives_each_port_s_packets_and_drops():
    counters = port_counters(DUMP_PORTS)
    assert counters["xe0"] == {"rx": 2034, "rx_drop": 3, "tx": 0, "tx_drop": 0}
    assert counters["br0-1b"] == {"rx": 0, "rx_drop": 0, "tx": 2031, "tx_drop": 1}
    assert counters["LOCAL"]["tx_drop"] == 0  # "?": a counter the port does not keep


def test_the_bridge_s_ports_are_numbered_in_their_order_and_drops_summed():
    kpis = port_kpis(port_counters(DUMP_PORTS), ["xe0", "br0-1b"])
    assert kpis == {"port0_ipackets": 2034, "port0_opackets": 0, "port0_rx_dropped": 3,
                    "port0_tx_dropped": 0, "port1_ipackets": 0, "port1_opackets": 2031,
                    "port1_rx_dropped": 0, "port1_tx_dropped": 1, "packets_dropped": 4}
    assert port_kpis({}, ["xe0"]) == {"port0_ipackets": 0, "port0_opackets": 0,
                                      "port0_rx_dropped": 0, "port0_tx_dropped": 0,
                                      "packets_dropped": 0}
