#!/bin/bash
# The cluster's CA, the API server's certificate, the service-account keys, static
# tokens and kubeconfigs (openssl only), in $1 (the state dir).
set -e
S=$1 API_PORT=$2
P=$S/pki; mkdir -p "$P"; cd "$P"
openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -key ca.key -subj "/CN=nsb-k8s-ca" -days 30 -out ca.crt
openssl genrsa -out apiserver.key 2048 2>/dev/null
printf 'subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.99.0.1,IP:10.96.0.1\nextendedKeyUsage=serverAuth\n' > apiserver.ext
openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr
openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
  -extfile apiserver.ext -out apiserver.crt 2>/dev/null
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
ADMIN=$(tok) NODE=$(tok) KCM=$(tok) SCHED=$(tok)
cat > tokens.csv <<E2
$ADMIN,admin,admin,"system:masters"
$NODE,system:node:nsb-node,node1,"system:nodes"
$KCM,system:kube-controller-manager,kcm,""
$SCHED,system:kube-scheduler,sched,""
E2
mk() {  # file token server
cat > "$S/$1" <<E2
apiVersion: v1
kind: Config
clusters:
- name: nsb-k8s
  cluster:
    server: $3
    certificate-authority: $P/ca.crt
users:
- name: user
  user:
    token: $2
contexts:
- name: nsb-k8s
  context: {cluster: nsb-k8s, user: user}
current-context: nsb-k8s
E2
}
IN=https://127.0.0.1:6443
mk admin.kubeconfig "$ADMIN" $IN; mk kubelet.kubeconfig "$NODE" $IN
mk kcm.kubeconfig "$KCM" $IN; mk scheduler.kubeconfig "$SCHED" $IN
mk kubeconfig "$ADMIN" "https://127.0.0.1:$API_PORT"   # the host's, through the relay
