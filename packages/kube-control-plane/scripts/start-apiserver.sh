#!/usr/bin/env bash
# Starts kube-apiserver for the control plane in DIR (made by start.sh: its etcd, port, token and
# service account key) and waits until /readyz answers. start.sh calls it; called again after
# `stop.sh DIR apiserver` it restarts the API server on the same etcd and port.
#   env: KUBE_APISERVER_BIN, KUBE_READY_TIMEOUT_SECONDS (120: about 4 s on an idle machine, a minute
#        and more on 2 cores busy with other work)
set -euo pipefail
BIN=${KUBE_APISERVER_BIN:-/opt/kube-control-plane/bin/kube-apiserver}
D=${1:?usage: start-apiserver.sh DIR}
# shellcheck disable=SC1091
source "$D/ports.env"
EP=$KUBE_ETCD_PORT; AP=$KUBE_API_PORT
token=$(cut -d, -f1 "$D/tokens.csv")
"$BIN" --etcd-servers="http://127.0.0.1:$EP" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port="$AP" --cert-dir="$D/certs" --token-auth-file="$D/tokens.csv" \
  --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$D/certs/sa.key" --service-account-signing-key-file="$D/certs/sa.key" \
  --disable-admission-plugins=ServiceAccount --allow-privileged=true --endpoint-reconciler-type=none \
  >> "$D/apiserver.log" 2>&1 &
pid=$!
echo $pid > "$D/apiserver.pid"
deadline=$((SECONDS + ${KUBE_READY_TIMEOUT_SECONDS:-120}))
while [ "$SECONDS" -lt "$deadline" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "kube-apiserver exited; see $D/apiserver.log" >&2; exit 1; }
  curl -sfk -H "Authorization: Bearer $token" "https://127.0.0.1:$AP/readyz" >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "kube-apiserver not ready after ${KUBE_READY_TIMEOUT_SECONDS:-120} s; see $D/apiserver.log" >&2
exit 1
