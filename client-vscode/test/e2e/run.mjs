// The e2e runner: builds nothing; installs the given .vsix file(s) plus the two test-only extensions
// into a fresh code-server on a fresh fixture workspace, and runs one scenario file against it.
//
//   client-vscode/test/e2e/run.sh [--scenario FILE] [--keep] path/to/smartctx.vsix [more.vsix ...]
//
// A scenario file exports `default async (ctx) => {...}` and optionally `options` ({settings, env,
// proposedApi, name, timeoutMs}) and `prepare({tmp, vsix, log})`, run before code-server starts, which
// may return more {settings, env} (e.g. a smartctx it installed, put on the PATH). ctx = {s (Session), wb (Workbench), workspace, head, step, selfTest,
// log, waitFor}. Each ctx.step(name, fn) saves screenshots/<name>.png when fn passes. Exit 0 on pass;
// on failure exit 1 and print the folder with screenshots and logs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { E2E_DIR, Session, exitAfterTeardown, guardProcess, log, waitFor } from "./harness.mjs";
import { makeFixture } from "./fixture.mjs";
import { packageTestExtensions } from "./vsix.mjs";

/** Runs fn as a named step; on success saves screenshots/<name>.png; on failure names the step. */
export async function step(s, name, fn) {
  const began = Date.now();
  log(`step ${name} …`);
  try {
    const r = await fn();
    await s.screenshot(name);
    log(`step ${name} passed (${Date.now() - began} ms)`);
    return r;
  } catch (err) {
    err.message = `step ${name}: ${err.message}`;
    throw err;
  }
}

function parseArgs(argv) {
  const a = { scenario: path.join(E2E_DIR, "extension.e2e.mjs"), vsix: [], keep: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--scenario") a.scenario = path.resolve(argv[++i]);
    else if (argv[i] === "--keep") a.keep = true;
    else if (argv[i] === "-h" || argv[i] === "--help") a.help = true;
    else a.vsix.push(path.resolve(argv[i]));
  }
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.help || !a.vsix.length) {
    console.error("usage: run.sh [--scenario FILE] [--keep] EXTENSION.vsix [MORE.vsix ...]");
    process.exit(2);
  }
  for (const v of a.vsix) if (!fs.existsSync(v)) throw new Error(`no such vsix: ${v}`);
  if (a.keep) process.env.E2E_KEEP = "1";
  const began = Date.now();
  const scenario = await import(pathToFileURL(a.scenario).href);
  const opts = scenario.options || {};
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-e2e-run-"));
  guardProcess({
    timeoutMs: opts.timeoutMs,
    cleanup: () => a.keep || fs.rmSync(tmp, { recursive: true, force: true }),
  });
  try {
    const testExts = await packageTestExtensions(path.join(tmp, "vsix"));
    const { dir: workspace, head } = makeFixture(path.join(tmp, "workspace"));
    const selfTestFile = path.join(tmp, "selftest.json");
    const modelLog = path.join(tmp, "scripted-model.jsonl");
    const prepared = scenario.prepare ? await scenario.prepare({ tmp, vsix: a.vsix, log }) : {};
    const s = await Session.start({
      name: opts.name || path.basename(a.scenario).replace(/\.e2e\.mjs$|\.mjs$/, ""),
      workspace,
      vsix: [...a.vsix, ...testExts],
      proposedApi: opts.proposedApi || ["smartctx.smartctx"],
      settings: {
        "smartctxE2e.selfTest.resultsFile": selfTestFile,
        ...(opts.settings || {}),
        ...(prepared.settings || {}),
      },
      env: { SMARTCTX_E2E_MODEL_LOG: modelLog, ...(opts.env || {}), ...(prepared.env || {}) },
    });
    const ctx = {
      s,
      wb: s.wb,
      workspace,
      head,
      log,
      waitFor,
      modelLog,
      step: (name, fn) => step(s, name, fn),
      /** The self-test extension's report, once written: {ok, checks: [{name, ok, detail, ms}]}. */
      selfTest: ({ timeout = 120000 } = {}) =>
        waitFor(
          "the self-test results file",
          () => fs.existsSync(selfTestFile) && JSON.parse(fs.readFileSync(selfTestFile, "utf8")),
          { timeout },
        ),
    };
    try {
      await scenario.default(ctx);
      log(`timings: ${JSON.stringify(s.timings)}; memory peak ${s.memoryReport()}`);
      await s.close();
    } catch (err) {
      fs.existsSync(modelLog) && fs.copyFileSync(modelLog, path.join(s.dirs.logs, "scripted-model.jsonl"));
      fs.existsSync(selfTestFile) && fs.copyFileSync(selfTestFile, path.join(s.dirs.logs, "selftest.json"));
      await s.close({ error: err });
      throw err;
    }
  } finally {
    if (!a.keep) fs.rmSync(tmp, { recursive: true, force: true });
  }
  log(`e2e passed: ${path.basename(a.scenario)} in ${((Date.now() - began) / 1000).toFixed(1)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    if (!/^step |deadline|interrupted/.test(err.message)) console.error(err.stack || err);
    void exitAfterTeardown(1, err.message);
  });
}
