# Source me (bash): puts the e2e toolchain's Node 24 first on PATH, so `npm`, `npx`, vsce, vitest and
# code-server run on it, and points node-gyp at its headers. Install it first with scripts/toolchain.sh.
#   source client-vscode/scripts/toolchain-env.sh
_smartctx_tools=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)/.tools
if [ -x "$_smartctx_tools/node/bin/node" ]; then
  case ":$PATH:" in
    *":$_smartctx_tools/node/bin:"*) ;;
    *) export PATH="$_smartctx_tools/node/bin:$PATH" ;;
  esac
  export npm_config_nodedir="$_smartctx_tools/node"
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
  export SMARTCTX_CODE_SERVER="$_smartctx_tools/code-server/node_modules/.bin/code-server"
else
  echo "toolchain-env: $_smartctx_tools/node missing: run client-vscode/scripts/toolchain.sh" >&2
fi
unset _smartctx_tools
