#!/bin/bash
# PID 1 of the cluster's private pid+net+mount+uts namespaces (made by up.sh with
# unshare). Everything the cluster does happens in here: the host's links, routes,
# iptables, mounts and sysctls stay as they were.
set -ex
S=$1 H=$2
mkdir -p "$S/varlog" "$S/varlibcni" "$S/fakesys" "$S/pod-logs"
mount --make-rshared /               # our copy of the mounts only
mount -t tmpfs -o mode=755 tmpfs /run  # containerd's state and shim sockets, /run/netns
mkdir -p /run/netns /run/containerd
mount --bind "$S/varlog" /var/log    # kubelet's /var/log/containers
[ -d /var/lib/cni ] || { mkdir -p /var/lib/cni && touch "$S/created-var-lib-cni"; }
mount --bind "$S/varlibcni" /var/lib/cni
# kubelet always rewrites these global sysctls: it writes fake files instead
for k in kernel/panic kernel/panic_on_oops vm/overcommit_memory vm/panic_on_oom \
         kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  f=$S/fakesys/$(echo $k | tr / _); cat /proc/sys/$k > "$f"; mount --bind "$f" /proc/sys/$k
done
hostname nsb-node
ip link set lo up
# no dummy links on every kernel: a veth pair inside the namespace carries the node's
# address (node0) and is the master of macvlan networks (node0p)
ip link add node0 type veth peer name node0p
ip addr add 10.99.0.1/24 dev node0
ip link set node0p up
ip link set node0 up
ip route add default via 10.99.0.254 dev node0 onlink
printf "127.0.0.1 localhost\n10.99.0.1 nsb-node\n" > "$S/hosts"
mount --bind "$S/hosts" /etc/hosts   # the node's name is the kubelet's address
echo ready > "$S/ns.ready"
exec "$H/bin/pause"
