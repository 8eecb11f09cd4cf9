-- LPM route table for handle_l3fwd.cfg: each port's subnet goes back out of
-- that port to the generator. dst_ipN / dst_macN (the generator's address and
-- MAC on DPDK port N) come from parameters.lua, which nsb writes from the
-- topology (prox_generate_parameter: true).
local lpm4 = {}
lpm4.next_hops = {
   {id = 0, port_id = 0, ip = ip(dst_ip0), mac = mac(dst_mac0), mpls = 0},
   {id = 1, port_id = 1, ip = ip(dst_ip1), mac = mac(dst_mac1), mpls = 0},
}
lpm4.routes = {
   {cidr = {ip = ip(dst_ip0), depth = 24}, next_hop_id = 0},
   {cidr = {ip = ip(dst_ip1), depth = 24}, next_hop_id = 1},
}
return lpm4
