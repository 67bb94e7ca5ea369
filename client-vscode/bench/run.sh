#!/usr/bin/env bash
# The extension's performance benchmark in a real VS Code (code-server + Chromium, the e2e harness of
# client-vscode/test/e2e). Builds nothing: pass the .vsix to measure.
#
#   (cd client-vscode && npm run package)                    # builds client-vscode/smartctx.vsix
#   client-vscode/bench/run.sh client-vscode/smartctx.vsix   # ≈ 1–2 min; prints the table
#   client-vscode/bench/run.sh [--out FILE] [--keep] path/to/smartctx.vsix
#
# Measures activation, palette command → panel rendered (20 tasks, warm), hover round-trip (20
# positions), @smartctx first reference (5 requests, scripted offline model) and the bundle sizes on a
# copy of this repository's server/ tree, next to the server's own time for the same requests. JSON
# goes to client-vscode/bench/out/extension_perf.json (not committed). See extension_perf.mjs.
# Env: as the e2e (E2E_PYTHON: the interpreter that runs the server and the in-process baseline,
# default <repo>/.venv/bin/python; E2E_TIMEOUT_MS, default 900000 here; E2E_DEBUG=1).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$HERE/../scripts/toolchain.sh"
# shellcheck source=../scripts/toolchain-env.sh
source "$HERE/../scripts/toolchain-env.sh"
exec node "$HERE/extension_perf.mjs" "$@"
