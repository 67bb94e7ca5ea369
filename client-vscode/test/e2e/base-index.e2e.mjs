// A team's published base in the editor: a CI job has published the fixture's commit to PostgreSQL,
// and the user sets smartctx.baseIndex and smartctx.baseIndexOnly. The status bar names the base
// (nothing of the folder is indexed whole), a pack in the panel comes from it, and a saved change is
// laid over it: the next pack holds the new function and the status bar counts one local file.
// Run: client-vscode/test/e2e/run.sh --scenario client-vscode/test/e2e/base-index.e2e.mjs client-vscode/smartctx.vsix
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { PYTHON, REPO_DIR } from "./harness.mjs";
import { packInThePanel } from "./steps.mjs";

// The editor's clone and the CI job name the repository alike, by its origin remote.
const REMOTE = "https://example.invalid/e2e/fixture.git";
// A function the user adds and saves: after the save, a pack for it quotes it from the local file.
const ADDED = `

def shipping_cost(weight_kg: float) -> float:
    """The shipping cost of an order by its weight in kilograms."""
    return 4.5 + 1.25 * weight_kg
`;

export const options = { name: "base-index", timeoutMs: 600000 };

// The throw-away PostgreSQL server (tests/postgres_server.py) runs in a Python child that stops it
// when its stdin closes: when the scenario ends, and also when this runner dies.
let postgres;

function startPostgres() {
  const script = [
    "import sys",
    `sys.path.insert(0, ${JSON.stringify(path.join(REPO_DIR, "tests"))})`,
    "import postgres_server",
    "server = postgres_server.start()",
    "print(server.url(), flush=True)",
    "try:",
    "    sys.stdin.read()",
    "finally:",
    "    server.stop()",
  ].join("\n");
  const child = spawn(PYTHON, ["-c", script], { stdio: ["pipe", "pipe", "inherit"] });
  const url = new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) =>
      reject(new Error(`the PostgreSQL helper exited (${code}) before it started`)),
    );
  });
  return { child, url };
}

function stopPostgres() {
  if (!postgres) return Promise.resolve();
  const { child } = postgres;
  postgres = undefined;
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin.end();
  return exited;
}

export async function prepare({ tmp, log }) {
  postgres = startPostgres();
  const url = await postgres.url;
  // The runner made the fixture repository here before calling prepare.
  const workspace = path.join(tmp, "workspace");
  execFileSync("git", ["-C", workspace, "remote", "add", "origin", REMOTE]);
  // As a CI job publishes it; run from tmp, not the workspace, whose smartctx/ is not the server.
  execFileSync(PYTHON, ["-m", "smartctx", "index", workspace, "--quiet", "--publish", url], {
    cwd: tmp,
    env: { ...process.env, SMARTCTX_CACHE_DIR: path.join(tmp, "ci-cache") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  log(`published the fixture's commit to ${url}`);
  return { settings: { "smartctx.baseIndex": url, "smartctx.baseIndexOnly": true } };
}

export default async function baseIndex({ s, wb, workspace, step, log }) {
  try {
    await step("01-status-names-the-base", async () => {
      const text = await wb.waitForStatusBar(/SmartCtx: base [0-9a-f]{7} \+ 0 local files/, {
        timeout: 120000,
      });
      log(`status bar: ${text}`);
      await wb.statusBarTooltip(/SmartCtx/, /Only the files that differ from it are indexed here\./);
    });

    await step("02-pack-from-the-base", async () => {
      await packInThePanel(wb);
    });

    await step("03-saved-change-laid-over-the-base", async () => {
      fs.appendFileSync(path.join(workspace, "app/pricing.py"), ADDED);
      // The first request after the watcher saw the change lays it over the base, in the
      // background; the base answers that request as it was.
      const oneLocalFile = /SmartCtx: base [0-9a-f]{7} \+ 1 local file\b/;
      for (let attempt = 1; ; attempt++) {
        await packInThePanel(wb);
        try {
          log(`status bar: ${await wb.waitForStatusBar(oneLocalFile, { timeout: 15000 })}`);
          break;
        } catch (err) {
          if (attempt === 3) throw err;
        }
      }
    });

    // Nothing of the folder was indexed whole: the server wrote no index of its own anywhere in the
    // session's folders (its cache folder among them).
    const indexes = execFileSync("find", [s.tmp, "-name", "index-v*.sqlite"], {
      encoding: "utf8",
    }).trim();
    if (indexes) throw new Error(`the folder was indexed whole: ${indexes}`);
  } finally {
    await stopPostgres();
  }
}
