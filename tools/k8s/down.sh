#!/bin/bash
# Stops the cluster up.sh started and leaves the host as it was: the namespace's PID 1
# takes every process of the cluster with it (and its links, mounts, bridges); then
# the relay, the kubepods cgroups and the state go.
H=${NSB_K8S_HOME:-/var/cache/nsb/k8s}
S=${NSB_K8S_STATE:-/var/lib/nsb/k8s}
[ -d "$S" ] || exit 0
if [ -s "$S/relay.pid" ]; then kill -KILL "$(cat "$S/relay.pid")" 2>/dev/null; fi
if [ -s "$S/ns.pid" ] && kill -0 "$(cat "$S/ns.pid")" 2>/dev/null; then
  NSPID=$(cat "$S/ns.pid")
  # what joined the cluster's network namespace from outside its pid namespace (the
  # relay's connections to the API server) does not die with its PID 1
  NETNS=$(readlink "/proc/$NSPID/ns/net")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$NETNS" ] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  kill -KILL "$NSPID"
  for _ in $(seq 100); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
fi
if [ -s "$S/unshare.pid" ]; then
  for _ in $(seq 50); do kill -0 "$(cat "$S/unshare.pid")" 2>/dev/null || break; sleep 0.1; done
fi
# relay children still serving a connection
pkill -KILL -f "socat TCP-LISTEN:${NSB_K8S_API_PORT:-16443},bind=127.0.0.1" 2>/dev/null
# cgroup v1: kubelet's and runc's cgroups, bottom up (a cgroup goes once it is empty)
for _ in 1 2 3 4 5; do
  left=0
  for h in /sys/fs/cgroup/*/; do
    if [ -d "$h/kubepods" ]; then
      find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
      [ -d "$h/kubepods" ] && left=1
    fi
  done
  [ $left = 0 ] && break; sleep 1
done
if [ -s "$S/hugepages-added" ]; then  # the pages up.sh added, back to the pool
  HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
  now=$(cat $HP); back=$(( now - $(cat "$S/hugepages-added") ))
  echo $(( back < 0 ? 0 : back )) > $HP
fi
if [ -f "$S/created-var-lib-cni" ]; then rmdir /var/lib/cni 2>/dev/null; fi
rm -rf "$S"
ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null && { echo "k8s: cgroups left behind" >&2; exit 1; }
exit 0
