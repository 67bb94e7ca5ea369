#!/usr/bin/env bash
# Runs the real-VS-Code e2e on the toolchain's Node 24. Builds nothing: pass the .vsix to test.
#   client-vscode/test/e2e/run.sh [--scenario FILE] [--keep] path/to/smartctx.vsix
#   client-vscode/test/e2e/run.sh --selftest        # the harness on a placeholder extension
# Env: E2E_TIMEOUT_MS (default 300000), E2E_KEEP=1 (keep temp state), E2E_PYTHON, E2E_CHROMIUM.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$HERE/../../scripts/toolchain.sh"
# shellcheck source=../../scripts/toolchain-env.sh
source "$HERE/../../scripts/toolchain-env.sh"
if [ "${1:-}" = --selftest ]; then
  exec node "$HERE/harness.selftest.mjs"
fi
exec node "$HERE/run.mjs" "$@"
