#!/usr/bin/env bash
# Starts etcd and kube-apiserver on loopback in DIR (default: a new temp dir), writes
# DIR/kubeconfig (token auth, system:masters) and prints DIR. Ready in about 4 s. Stop with
# stop.sh DIR; restart only the API server (same etcd, same port) with stop.sh DIR apiserver and
# start-apiserver.sh DIR. @gantry/kube-control-plane's startControlPlane() runs these on free ports.
#   env: KUBE_APISERVER_BIN, KUBE_ETCD_PORT (12379; its peer port is the next one), KUBE_API_PORT (16443)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
D=${1:-$(mktemp -d /tmp/kube-cp.XXXXXX)}
EP=${KUBE_ETCD_PORT:-12379}; PP=$((EP + 1)); AP=${KUBE_API_PORT:-16443}
mkdir -p "$D/etcd" "$D/certs"
printf 'KUBE_ETCD_PORT=%s\nKUBE_API_PORT=%s\n' "$EP" "$AP" > "$D/ports.env"
etcd --name cp --data-dir "$D/etcd" \
  --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
  --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
  --initial-cluster "cp=http://127.0.0.1:$PP" > "$D/etcd.log" 2>&1 &
echo $! > "$D/etcd.pid"
openssl genrsa -out "$D/certs/sa.key" 2048 2>/dev/null
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,admin,admin,system:masters" > "$D/tokens.csv"
deadline=$((SECONDS + 30))
until curl -sf "http://127.0.0.1:$EP/health" >/dev/null || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.1; done
curl -sf "http://127.0.0.1:$EP/health" >/dev/null || { echo "etcd not healthy; see $D/etcd.log" >&2; exit 1; }
bash "$here/start-apiserver.sh" "$D"
cat > "$D/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://127.0.0.1:$AP", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
K
echo "$D"
