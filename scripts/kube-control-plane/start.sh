#!/usr/bin/env bash
# Kept in the repository (from the team's kube-control-plane tooling); the kube-emulator's
# startControlPlane() (packages/kube-emulator/src/test-support) runs it on free ports.
# Starts etcd and kube-apiserver on loopback in DIR (default: a new temp dir), writes DIR/kubeconfig
# (token auth, system:masters) and prints DIR. Ready in about 4 s. Stop with stop.sh DIR.
#   env: KUBE_APISERVER_BIN, KUBE_ETCD_PORT (12379), KUBE_API_PORT (16443)
set -euo pipefail
BIN=${KUBE_APISERVER_BIN:-/opt/kube-control-plane/bin/kube-apiserver}
D=${1:-$(mktemp -d /tmp/kube-cp.XXXXXX)}
EP=${KUBE_ETCD_PORT:-12379}; PP=$((EP + 1)); AP=${KUBE_API_PORT:-16443}
mkdir -p "$D/etcd" "$D/certs"
etcd --name cp --data-dir "$D/etcd" \
  --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
  --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
  --initial-cluster "cp=http://127.0.0.1:$PP" > "$D/etcd.log" 2>&1 &
echo $! > "$D/etcd.pid"
openssl genrsa -out "$D/certs/sa.key" 2048 2>/dev/null
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,admin,admin,system:masters" > "$D/tokens.csv"
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$EP/health" >/dev/null && break; sleep 0.1; done
"$BIN" --etcd-servers="http://127.0.0.1:$EP" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port="$AP" --cert-dir="$D/certs" --token-auth-file="$D/tokens.csv" \
  --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$D/certs/sa.key" --service-account-signing-key-file="$D/certs/sa.key" \
  --disable-admission-plugins=ServiceAccount --allow-privileged=true --endpoint-reconciler-type=none \
  > "$D/apiserver.log" 2>&1 &
echo $! > "$D/apiserver.pid"
for _ in $(seq 1 600); do
  curl -sfk -H "Authorization: Bearer $token" "https://127.0.0.1:$AP/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sfk -H "Authorization: Bearer $token" "https://127.0.0.1:$AP/readyz" >/dev/null || { echo "kube-apiserver not ready; see $D/apiserver.log" >&2; exit 1; }
cat > "$D/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://127.0.0.1:$AP", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
K
echo "$D"
