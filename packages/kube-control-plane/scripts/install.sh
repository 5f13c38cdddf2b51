#!/usr/bin/env bash
# Part of @gantry/kube-control-plane (packages/kube-control-plane/scripts) so that a clone and CI can
# build the control plane the Kubernetes tests run against; .ci/run calls it before the tests.
# Installs a real Kubernetes control plane for tests on a machine without Docker or internet:
# etcd from Debian's etcd-server package, and kube-apiserver v1.20.2 built from Debian bookworm's
# `kubernetes` source package (it vendors every Go dependency, so the build needs no network).
# Idempotent: a binary already at $KUBE_APISERVER_BIN is kept. Takes about 3 minutes and 1.3 GB
# of memory on a 2-core machine the first time.
#   usage: install.sh            -> prints the path of kube-apiserver
set -euo pipefail
BIN=${KUBE_APISERVER_BIN:-/opt/kube-control-plane/bin/kube-apiserver}
export DEBIAN_FRONTEND=noninteractive
need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v go >/dev/null || need+=(golang-go)
[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need+=(golang-github-modern-go-reflect2-dev)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
command -v make >/dev/null || need+=(make)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi

W=$(mktemp -d /tmp/kube-src.XXXXXX)
trap 'rm -rf "$W"' EXIT
# A deb-src line for the same Debian mirror this machine's apt already uses (no host is named here).
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null \
  | grep -E '^(URIs:|deb )' | grep -v security | head -n 1 \
  | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//; s/[[:space:]].*$//' || true)
[ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources" >&2; exit 1; }
mkdir -p "$W/parts"
printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" > "$W/parts/src.sources"
: > "$W/empty.list"
APT=(-o Dir::Etc::SourceList="$W/empty.list" -o Dir::Etc::SourceParts="$W/parts" -o Dir::State::Lists="$W/lists" -o APT::Sandbox::User=root)
mkdir -p "$W/lists/partial"
apt-get "${APT[@]}" update -qq
(cd "$W" && apt-get "${APT[@]}" source -qq kubernetes >/dev/null 2>&1)
SRC=$(ls -d "$W"/kubernetes-*/ | head -n 1)
# Kubernetes 1.20 vendors reflect2 v1.0.1, which crashes under Go >= 1.18; Debian ships the fixed 1.0.2.
V="$SRC/vendor/github.com/modern-go/reflect2"
rm -f "$V"/*.go "$V"/*.s
cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s "$V"/
# Go >= 1.23 refuses old vendored //go:linkname pulls unless told otherwise (Debian 13 ships Go 1.24).
goldflags="-s -w"
gominor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "${gominor:-0}" -ge 23 ]; then goldflags="$goldflags -checklinkname=0"; fi
(cd "$SRC" && env GOLDFLAGS="$goldflags" CGO_ENABLED=0 GOFLAGS= GO111MODULE=off HOME="$W" GOCACHE="$W/gocache" \
  KUBE_GIT_VERSION=v1.20.2 KUBE_GIT_TREE_STATE=clean KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20 \
  make WHAT=cmd/kube-apiserver >"$W/build.log" 2>&1) || { tail -n 40 "$W/build.log" >&2; exit 1; }
mkdir -p "$(dirname "$BIN")"
install -m755 "$SRC/_output/bin/kube-apiserver" "$BIN"
"$BIN" --version >&2
echo "$BIN"
