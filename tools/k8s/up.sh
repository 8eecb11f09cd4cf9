#!/bin/bash
# Starts the single-node cluster (built by build.sh) inside private pid+net+mount+uts
# namespaces, as root: etcd, the API server, controller manager, scheduler, containerd,
# kubelet, the bridge CNI with Multus. Prints the host's kubeconfig path; the API is
# reached from the host through a relay on 127.0.0.1:$NSB_K8S_API_PORT.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
H=${NSB_K8S_HOME:-/var/cache/nsb/k8s}
S=${NSB_K8S_STATE:-/var/lib/nsb/k8s}
API_PORT=${NSB_K8S_API_PORT:-16443}
PYTHON=${NSB_PYTHON:-python3}
B=$H/bin
log() { echo "k8s: $*" >&2; }
for p in etcd containerd runc socat unshare nsenter openssl ctr; do
  command -v $p >/dev/null || { log "needs $p (apt-get install etcd-server containerd runc containernetworking-plugins socat)"; exit 2; }
done
[ -x "$B/kubelet" ] && [ -x "$B/pause" ] || { log "no cluster build in $B: run tools/k8s/build.sh (make k8s does)"; exit 2; }
if [ -s "$S/ns.pid" ] && kill -0 "$(cat "$S/ns.pid")" 2>/dev/null && [ -s "$S/kubeconfig" ]; then
  echo "$S/kubeconfig"; exit 0   # already up
fi
"$HERE/down.sh" >/dev/null 2>&1 || true   # what a killed cluster left
mkdir -p "$S/logs" "$S/cni/bin" "$S/cni/net.d" "$S/images"
"$HERE/pki.sh" "$S" "$API_PORT"
setsid unshare --pid --fork --mount-proc --net --mount --uts --propagation private \
  "$HERE/ns-init.sh" "$S" "$H" > "$S/logs/ns-init.log" 2>&1 < /dev/null &
echo $! > "$S/unshare.pid"
for _ in $(seq 100); do [ -f "$S/ns.ready" ] && break; sleep 0.1; done
[ -f "$S/ns.ready" ] || { log "the cluster's namespace did not come up: $(tail -3 "$S/logs/ns-init.log")"; exit 1; }
NSPID=$(pgrep -P "$(cat "$S/unshare.pid")"); echo "$NSPID" > "$S/ns.pid"
IN="nsenter -t $NSPID -p -n -m -u --"
start() {  # name argv...: a daemon in the namespace, its log under $S/logs
  local name=$1; shift
  $IN sh -c 'exec nice -n 5 "$@"' sh "$@" >> "$S/logs/$name.log" 2>&1 < /dev/null &
}
api() { $IN "$PYTHON" -c 'import ssl,sys,urllib.request
c=ssl.create_default_context(cafile=sys.argv[1]); t=sys.argv[2]
r=urllib.request.Request("https://127.0.0.1:6443"+sys.argv[3],headers={"Authorization":"Bearer "+t})
print(urllib.request.urlopen(r,context=c,timeout=5).read().decode())' "$S/pki/ca.crt" \
  "$(head -1 "$S/pki/tokens.csv" | cut -d, -f1)" "$1" 2>/dev/null; }
wait_for() {  # what seconds command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq "$secs"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  log "$what not ready after ${secs} s (logs in $S/logs)"; exit 1
}
start etcd etcd --name nsb --data-dir "$S/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster nsb=http://127.0.0.1:2380
P=$S/pki
start kube-apiserver "$B/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --advertise-address=10.99.0.1 --bind-address=0.0.0.0 --secure-port=6443 \
  --service-cluster-ip-range=10.96.0.0/24 --token-auth-file="$P/tokens.csv" \
  --authorization-mode=AlwaysAllow --tls-cert-file="$P/apiserver.crt" \
  --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc --cert-dir="$S/apiserver-certs" \
  --allow-privileged=true
wait_for "the API server" 180 api /readyz
start kube-controller-manager "$B/kube-controller-manager" --kubeconfig="$S/kcm.kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --service-account-private-key-file="$P/sa.key" \
  --root-ca-file="$P/ca.crt" --cluster-signing-cert-file="$P/ca.crt" \
  --cluster-signing-key-file="$P/ca.key"
start kube-scheduler "$B/kube-scheduler" --kubeconfig="$S/scheduler.kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1
# CNI: Debian's plugins and Multus, the pods' default network a bridge inside the namespace
for f in /usr/lib/cni/*; do ln -sf "$f" "$S/cni/bin/"; done
[ -x "$B/multus" ] && ln -sf "$B/multus" "$S/cni/bin/multus"
BRIDGE='{"cniVersion":"0.4.0","name":"nsb-pods","plugins":[{"type":"bridge","bridge":"nsbpods0","isGateway":true,"ipMasq":false,"hairpinMode":true,"ipam":{"type":"host-local","dataDir":"'$S'/cni-ipam","ranges":[[{"subnet":"10.244.0.0/24","gateway":"10.244.0.1"}]],"routes":[{"dst":"0.0.0.0/0"}]}},{"type":"portmap","capabilities":{"portMappings":true},"snat":false}]}'
if [ -x "$B/multus" ]; then
  cat > "$S/cni/net.d/00-multus.conf" <<E2
{"cniVersion":"0.4.0","name":"multus-cni-network","type":"multus","kubeconfig":"$S/admin.kubeconfig","cniDir":"$S/multus-cache","binDir":"$S/cni/bin","confDir":"$S/cni/net.d","logFile":"$S/logs/multus.log","delegates":[$BRIDGE]}
E2
else
  echo "$BRIDGE" > "$S/cni/net.d/10-bridge.conflist"
fi
cat > "$S/containerd.toml" <<E2
version = 2
root = "$S/containerd/root"
state = "/run/containerd"
[grpc]
  address = "$S/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$S/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  enable_cdi = false
  restrict_oom_score_adj = true  # no CAP_SYS_RESOURCE in some VMs: runc cannot lower it
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$S/cni/bin"
    conf_dir = "$S/cni/net.d"
    max_conf_num = 1
E2
start containerd containerd --config "$S/containerd.toml"
wait_for containerd 30 ctr -a "$S/containerd.sock" version
PYTHONPATH=$HERE/../.. "$PYTHON" -m nsb.k8s.image_archive "$S/images/pause.tar" \
  registry.k8s.io/pause:3.10 --file "$B/pause:/pause" --cmd '["/pause"]' >/dev/null
ctr -a "$S/containerd.sock" -n k8s.io images import "$S/images/pause.tar" >/dev/null
cat > "$S/kubelet-config.yaml" <<E2
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$S/containerd.sock
makeIPTablesUtilChains: false
failSwapOn: false
failCgroupV1: false
podLogsDir: $S/pod-logs
address: 10.99.0.1
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%"}
maxPods: 30
E2
# 2 MB hugepages for CNF pods (vhost-user needs its memory shared from them): a kubelet
# counts the node's hugepages once, when it starts, as on a node that reserves them at
# boot; down.sh gives back exactly what was added here
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
want=$(( ${NSB_K8S_HUGEPAGES_MB:-512} / 2 )); before=$(cat $HP)
echo $(( before + want )) > $HP 2>/dev/null || true
added=$(( $(cat $HP) - before )); echo "$added" > "$S/hugepages-added"
[ "$added" -ge "$want" ] || log "only $added of $want hugepages of 2 MB could be added"
start kubelet "$B/kubelet" --config="$S/kubelet-config.yaml" --kubeconfig="$S/kubelet.kubeconfig" \
  --root-dir="$S/kubelet" --cert-dir="$S/kubelet/pki" --node-ip=10.99.0.1 \
  --hostname-override=nsb-node -v=1
node_ready() { api /api/v1/nodes/nsb-node | grep -q '"type": *"Ready", *"status": *"True"' ||
  api /api/v1/nodes/nsb-node | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'; }
wait_for "the node" 120 node_ready
# the relay: the host's 127.0.0.1:$API_PORT to the API server in the namespace
setsid socat TCP-LISTEN:"$API_PORT",bind=127.0.0.1,fork,reuseaddr \
  EXEC:"nsenter -t $NSPID -n socat STDIO TCP\:127.0.0.1\:6443" > "$S/logs/relay.log" 2>&1 < /dev/null &
echo $! > "$S/relay.pid"
echo "$S/containerd.sock" > "$S/containerd.address"
KC="$S/kubeconfig"
wait_for "the API relay" 10 "$PYTHON" -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),1)' "$API_PORT"
if [ -x "$B/multus" ]; then  # Multus' NetworkAttachmentDefinition type
  $IN "$PYTHON" - "$S" "$HERE/nad-crd.yaml" <<'E2' >/dev/null
import json, ssl, sys, urllib.request
state, crd = sys.argv[1], sys.argv[2]
token = open(f"{state}/pki/tokens.csv").readline().split(",")[0]
import re
body = open(crd).read()
req = urllib.request.Request("https://127.0.0.1:6443/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    data=body.encode(), method="POST", headers={"Authorization": "Bearer " + token,
    "Content-Type": "application/yaml"})
urllib.request.urlopen(req, context=ssl.create_default_context(cafile=f"{state}/pki/ca.crt"), timeout=10)
E2
fi
log "node nsb-node Ready (Kubernetes $("$B/kubelet" --version | cut -d' ' -f2))"
echo "$KC"
