#!/bin/bash
# Builds the single-node cluster's programs from the Go module proxy, once, into
# $NSB_K8S_HOME/bin (default /var/cache/nsb/k8s): Kubernetes' control plane and kubelet
# (v1.34: the last release that runs on cgroup v1 by default and with containerd 1.x) and
# the Multus thin plugin. A binary already there at the right version is not rebuilt.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HOME_DIR=${NSB_K8S_HOME:-/var/cache/nsb/k8s}
K8S_VERSION=v1.34.4
MULTUS_VERSION=v4.2.2
BIN=$HOME_DIR/bin
mkdir -p "$BIN" "$HOME_DIR/src"
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=0 GOFLAGS="-buildvcs=false -p=${NSB_K8S_BUILD_JOBS:-2}"
command -v go >/dev/null || { echo "building the cluster needs Go (>= 1.24) on PATH" >&2; exit 2; }

LD="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=34"
done
LD="$LD -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z"

# a module of our own requires the release and replaces its staging modules by their
# versions (go install refuses k8s.io/kubernetes@version for its replace directives)
build() {  # module-dir output package version
  local mod=$1 out=$2 pkg=$3 version=$4
  if [ -x "$BIN/$out" ] && [ "$(cat "$BIN/$out.version" 2>/dev/null)" = "$version" ]; then
    return
  fi
  rm -rf "$HOME_DIR/src/$mod" && cp -r "$HERE/modules/$mod" "$HOME_DIR/src/$mod"
  local start=$SECONDS
  (cd "$HOME_DIR/src/$mod" && { [ -s go.sum ] || nice -n 19 go mod tidy; } &&
   nice -n 19 go build -trimpath -ldflags "$LD" -o "$BIN/$out.tmp" "$pkg")
  mv "$BIN/$out.tmp" "$BIN/$out" && echo "$version" > "$BIN/$out.version"
  echo "built $out $version in $((SECONDS - start)) s"
}
for cmd in kube-apiserver kubelet kube-controller-manager kube-scheduler; do
  build kubernetes "$cmd" "k8s.io/kubernetes/cmd/$cmd" "$K8S_VERSION"
done
if [ -z "${NSB_K8S_NO_MULTUS:-}" ]; then
  build multus multus gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus "$MULTUS_VERSION"
fi
if [ -n "${NSB_K8S_KUBECTL:-}" ]; then
  build kubernetes kubectl k8s.io/kubernetes/cmd/kubectl "$K8S_VERSION"
fi
# the sandbox image's program (and the cluster namespace's PID 1): Kubernetes' own pause.c
if [ ! -x "$BIN/pause" ]; then
  gcc -Os -static -DVERSION=3.10 -o "$BIN/pause" \
    "$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c"
fi
echo "$BIN"
