"""The pipeline templates NSB's SampleVNF tasks start from (its sample ``vfw.cfg``,
``acl.cfg``, ``cgnat.cfg``): each section's keys in their order and the values
NSB leaves as they are. The keys nsb fills (``None`` here: ``core``, ``pktq_in``,
``pktq_out``, ...) come from the ports and ``vnf_config``."""

from __future__ import annotations

Template = dict[str, tuple[tuple[str, str | None], ...]]

_QUEUES = (("core", None), ("pktq_in", None), ("pktq_out", None))
MASTER = (("type", "MASTER"), ("core", "0"))
_ARPICMP = (("type", "ARPICMP"), *_QUEUES)
_PRIVATE = (("pktq_in_prv", None), ("prv_to_pub_map", None))
TXRX = (("type", "TXRX"), ("core", None), ("pipeline_txrx_type", None),
        ("dest_if_offset", "176"), ("pktq_in", None), ("pktq_out", None))
_LOADB = (("type", "LOADB"), *_QUEUES)

VFW: Template = {
    "MASTER": MASTER,
    "ARPICMP": (*_ARPICMP,
                ("arp_route_tbl", "(c0102814,fffff000,1,c0102814) (c0106414,fffff000,0,c0106414)"),
                ("nd_route_tbl", "(0064:ff9b:0:0:0:0:9810:6414,120,0,0064:ff9b:0:0:0:0:9810:6414)"),
                *_PRIVATE),
    "TXRX": TXRX,
    "LOADB": (*_LOADB, ("outport_offset", "136"), ("n_vnf_threads", None), ("n_lb_tuples", "5"),
              ("loadb_debug", "0"), ("lib_arp_debug", "0")),
    "VFW": (("type", "VFW"), *_QUEUES, ("n_rules", "10"), ("prv_que_handler", "(0)"),
            ("n_flows", "2000000"), ("traffic_type", "4"), ("pkt_type", "ipv4"),
            ("tcp_be_liberal", "0")),
}

ACL: Template = {
    "MASTER": MASTER,
    "ARPICMP": (*_ARPICMP, *_PRIVATE),
    "TXRX": TXRX,
    "LOADB": (*_LOADB, ("outport_offset", "136; 8"), ("n_vnf_threads", None)),
    "ACL": (("type", "ACL"), *_QUEUES, ("traffic_type", "4"), ("pkt_type", "ipv4"),
            ("n_flows", "2000000")),
}

CGNAPT: Template = {
    "MASTER": MASTER,
    "ARPICMP": (*_ARPICMP, *_PRIVATE),
    "TIMER": (("type", "TIMER"), ("core", None), ("timer_dyn_timeout", "1000000"),
              ("n_flows", "1048576")),
    "TXRX": TXRX,
    "LOADB": (*_LOADB, ("outport_offset", "136; 8"), ("n_vnf_threads", None)),
    "CGNAPT": (("type", "CGNAPT"), *_QUEUES, ("phyport_offset", "204"), ("n_flows", "1048576"),
               ("key_offset", "192;64"), ("key_size", "8"), ("hash_offset", "200;72"),
               ("timer_period", "100"), ("max_clients_per_ip", "65535"),
               ("max_port_per_client", "100"), ("public_ip_port_range", "04040000:(1, 65535)"),
               ("vnf_set", "(3,4,5)"), ("pkt_type", "ipv4"), ("cgnapt_meta_offset", "128"),
               ("prv_que_handler", "(0)")),
}

TEMPLATES = {"VFW": VFW, "ACL": ACL, "CGNAPT": CGNAPT}
