# A GPU cluster on a real kube-apiserver for the dev and e2e scripts (sourced after lib.sh):
# etcd + kube-apiserver (packages/kube-control-plane), Gantry's namespace, ServiceAccount and roles
# and the mig-parted ConfigMap from deploy/kubernetes, a kubeconfig holding the gantry-driver
# ServiceAccount's token (what the worker uses: never cluster-admin), and the kube-emulator
# (packages/kube-emulator) playing kubelets, the GPU Operator and the health monitors.
#
#   kube_cluster_up DIR      starts it all; DIR keeps etcd's data, so a second start adopts the
#                            cluster as it was (nodes, MIG layouts, running pods)
#   kube_cluster_down DIR    stops the emulator, kube-apiserver and etcd; keeps DIR
#
# Sets KUBE_ADMIN_KUBECONFIG (system:masters, for people and the emulator), GANTRY_KUBECONFIG (the
# driver's ServiceAccount), GANTRY_KUBE_EMULATOR_URL (the emulator's control API: faults) and
# GANTRY_KUBE_DCGM_URL (its dcgm-exporter metrics: GPU telemetry).
# env: KUBE_ETCD_PORT (12379), KUBE_API_PORT (16443), KUBE_EMULATOR_CONTROL_PORT (9401),
#      KUBE_EMULATOR_METRICS_PORT (9400), KUBE_EMULATOR_TOPOLOGY (demo), KUBE_EMULATOR_ARGS (extra flags)

KUBE_DEPLOY_DIR="$ROOT/deploy/kubernetes"
# What the driver needs in the cluster; the Deployments of deploy/kubernetes are for a real
# cluster with kubelets (docs/operations.md), here the processes run on this machine.
KUBE_CLUSTER_MANIFESTS=(namespace.yaml rbac.yaml mig-parted-config.yaml config.yaml)

kube_cluster_up() {
  local dir=$1
  mkdir -p "$dir"
  kube_cluster_down "$dir" 2>/dev/null # a previous run killed with -9 may have left them
  [ -x "${KUBE_APISERVER_BIN:-/opt/kube-control-plane/bin/kube-apiserver}" ] ||
    die "no kube-apiserver: run bash packages/kube-control-plane/scripts/install.sh once (about 3 minutes)"
  command -v kubectl >/dev/null || die "kubectl is needed to apply deploy/kubernetes"
  log "starting etcd and kube-apiserver (:${KUBE_API_PORT:-16443}) in $dir"
  bash "$ROOT/packages/kube-control-plane/scripts/start.sh" "$dir" >/dev/null ||
    die "the control plane did not start: see $dir/apiserver.log and $dir/etcd.log"
  export KUBE_ADMIN_KUBECONFIG="$dir/kubeconfig"
  local k=(kubectl --kubeconfig "$KUBE_ADMIN_KUBECONFIG" --request-timeout=20s)
  log "applying deploy/kubernetes (${KUBE_CLUSTER_MANIFESTS[*]})"
  "${k[@]}" get namespace gpu-operator >/dev/null 2>&1 || "${k[@]}" create namespace gpu-operator >/dev/null
  local m
  for m in "${KUBE_CLUSTER_MANIFESTS[@]}"; do
    "${k[@]}" apply --server-side --force-conflicts -f "$KUBE_DEPLOY_DIR/$m" >/dev/null || die "kubectl apply $m failed"
  done
  local token
  token=$("${k[@]}" -n gantry create token gantry-driver --duration=48h) || die "no token for the gantry-driver ServiceAccount"
  export GANTRY_KUBECONFIG="$dir/gantry-driver.kubeconfig"
  (umask 077 && sed -e "s/token: \"[^\"]*\"/token: \"$token\"/" -e 's/name: admin/name: gantry-driver/g' -e 's/user: admin/user: gantry-driver/' \
    "$KUBE_ADMIN_KUBECONFIG" >"$GANTRY_KUBECONFIG")
  kubectl --kubeconfig "$GANTRY_KUBECONFIG" auth can-i patch nodes >/dev/null 2>&1 || die "the gantry-driver token cannot patch nodes (RBAC of deploy/kubernetes)"
  if kubectl --kubeconfig "$GANTRY_KUBECONFIG" auth can-i create nodes >/dev/null 2>&1; then
    die "the gantry-driver token can create nodes: it should hold only deploy/kubernetes/rbac.yaml"
  fi

  local control_port=${KUBE_EMULATOR_CONTROL_PORT:-9401}
  log "starting the kube-emulator (topology ${KUBE_EMULATOR_TOPOLOGY:-demo}, control API :$control_port)"
  # shellcheck disable=SC2086 # KUBE_EMULATOR_ARGS is a list of flags
  node "$ROOT/packages/kube-emulator/dist/cli.js" --kubeconfig "$KUBE_ADMIN_KUBECONFIG" \
    --topology "${KUBE_EMULATOR_TOPOLOGY:-demo}" --control-port "$control_port" \
    --metrics-port "${KUBE_EMULATOR_METRICS_PORT:-9400}" ${KUBE_EMULATOR_ARGS:-} >>"$dir/emulator.log" 2>&1 &
  echo $! >"$dir/emulator.pid"
  export GANTRY_KUBE_EMULATOR_URL="http://127.0.0.1:$control_port"
  export GANTRY_KUBE_DCGM_URL="http://127.0.0.1:${KUBE_EMULATOR_METRICS_PORT:-9400}/metrics"
  wait_for "$GANTRY_KUBE_EMULATOR_URL/healthz" 60 || { tail -n 20 "$dir/emulator.log" >&2; die "the kube-emulator did not start"; }
  log "$("${k[@]}" get nodes -l kube-emulator.gantry.io/node=true --no-headers 2>/dev/null | wc -l) GPU nodes registered; kubectl --kubeconfig $KUBE_ADMIN_KUBECONFIG get nodes"
}

# A TCP port of this machine nobody listens on now (the kernel's choice).
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Two consecutive free ports (etcd's client and peer ports); prints the first.
free_port_pair() {
  node -e '
    const net = require("net");
    const tryPort = (p) => new Promise((ok) => { const s = net.createServer().once("error", () => ok(false)).listen(p, "127.0.0.1", () => s.close(() => ok(true))); });
    (async () => { for (;;) { const p = 20000 + Math.floor(Math.random() * 30000); if ((await tryPort(p)) && (await tryPort(p + 1))) return console.log(p); } })();'
}

kube_cluster_down() {
  local dir=$1 p pid
  for p in emulator apiserver etcd; do
    [ -f "$dir/$p.pid" ] || continue
    pid=$(cat "$dir/$p.pid")
    # only what this directory started (a stale pid file may name another process by now)
    if ! { [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$dir"; }; then
      rm -f "$dir/$p.pid"
      continue
    fi
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$p.pid"
  done
  return 0
}
