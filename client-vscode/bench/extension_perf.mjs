// The extension's performance in a real VS Code (code-server 1.139.1, the e2e harness), one run:
//   activation (the extension's own log line, and VS Code's "Running Extensions" figure);
//   palette command -> panel rendered, 20 tasks after one warm-up (in-host executeCommand wall time,
//     and the logged split: pack answered / webview rendered);
//   hover round-trip over 20 positions (vscode.executeHoverProvider through the language client);
//   the same command through the real palette and input box, 5 tasks (Playwright: Enter -> rendered);
//   @smartctx first reference streamed over 5 requests (scripted offline model, as the e2e);
//   bundle sizes (dist/extension.js inside the .vsix, the .vsix, the wheel it carries).
// Baseline, same run: the server's own time for the same requests: its log line per contextForTask
// (the pack's metadata.timingsMs summed), and, after code-server is closed, the server's Workspace
// in process on the same workspace (server_inprocess.py), which also times the hover lookups; and
// the panel's HTML made from those packs by src/render.ts in plain Node (render_time.mjs), to split
// the panel's time after the pack into HTML (extension host) and the webview's own load.
//
//   client-vscode/bench/run.sh path/to/smartctx.vsix        (see run.sh; builds nothing)
//
// Workspace: a copy of this repository's server/ tree at HEAD (git archive, committed with git in a
// temp folder; ~70 Python files, 11 kLOC), so the tasks are real questions with real answers. Prints
// one table; writes JSON to client-vscode/bench/out/extension_perf.json (or --out FILE). Each timed
// call is paired with the SmartCtx log lines it caused by their timestamps (the log's and the
// extension host's clocks are the same machine's).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  E2E_DIR,
  PYTHON,
  REPO_DIR,
  Session,
  exitAfterTeardown,
  guardProcess,
  log,
  waitFor,
} from "../test/e2e/harness.mjs";
import { packageExtension } from "../test/e2e/vsix.mjs";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

// Realistic tasks about the workspace (this repository's server), one warm-up and 20 timed.
const WARMUP_TASKS = ["how is the context pack for a task built"];
const TASKS = [
  "how does the language server answer a hover over a name",
  "where are unsaved editor buffers indexed instead of the file on disk",
  "cancelling a contextForTask request should stop the pipeline at the next stage",
  "how is the token budget enforced when packing bodies and summaries",
  "add a setting to exclude folders from indexing with glob patterns",
  "why does a branch switch re-index thousands of files in one reconcile",
  "how are secrets redacted from packed code",
  "where does the PageRank score of a symbol come from",
  "the status bar shows indexing forever after the index folder is deleted",
  "how are the path:start-end citations built for each packed item",
  "run tree-sitter tags queries to extract definitions and references",
  "how does the file watcher debounce bursts of file changes",
  "gitignore negated patterns are not respected by the scanner",
  "how are git blame breadcrumbs of recent changes cached per file",
  "multi-root workspace: route a request to the innermost folder holding the URI",
  "what does includeImpact add to the pack and how are dependents found",
  "BM25 full-text search over symbol names, signatures and docs in SQLite FTS5",
  "how does diversify cap the number of bodies per file",
  "the smartctx context command line: its options and JSON output",
  "schema version of the SQLite index store and where the index folder lives",
];
// Through the real palette and input box (Playwright), after the in-host runs: Enter → rendered.
const UI_TASKS = [
  "how does the server forward its log records to the client",
  "where is the workspace folder name made unique",
  "how is a symbol's latest git change found for the hover",
  "what limits the number of summaries in a pack",
  "how are parser worker processes started",
];
const WARMUP_CHAT = ["what does the language server do on initialize"];
const CHAT = [
  "how does expand return one symbol in full",
  "where are settings from the client validated",
  "how is the task text split into search terms",
  "what happens when the index cannot be opened",
  "how are references between symbols resolved after parsing",
];
// Hover positions: [a substring of a line, the name to hover on it]; the line is the first holding
// the substring in the workspace's Python files (sorted by path), so moved files do not matter. Each is
// a use of a definition the index knows.
const WARMUP_HOVERS = [["return file_rows(build_indexed_file(", "build_indexed_file"]];
const HOVERS = [
  ["indexer = Indexer(root, store, config)", "Indexer"],
  ["store = IndexStore(root, args.index_dir)", "IndexStore"],
  ["counter = TokenCounter(options.tokenizer)", "TokenCounter"],
  ["pack = build_context(", "build_context"],
  ["WorkspaceSources(root),", "WorkspaceSources"],
  ["history=GitHistory(root)", "GitHistory"],
  ["print(json.dumps(pack_to_wire(pack)", "pack_to_wire"],
  ["index = LiveIndex(", "LiveIndex"],
  ["found = innermost_folder(", "innermost_folder"],
  ["detail = expand_node(", "expand_node"],
  ["symbol = symbol_at(snapshot", "symbol_at"],
  ["fence = fence_for(signature)", "fence_for"],
  ["self.settings, warnings = parse_settings(", "parse_settings"],
  ["self.protocol.notify(INDEX_STATUS, status_to_wire(", "status_to_wire"],
  ["requests = context_requests(params", "context_requests"],
  ["value=hover_markdown(symbol", "hover_markdown"],
  ["path = workspace_path(root, uri)", "workspace_path"],
  ["packed = select_and_pack(", "select_and_pack"],
  ["task = parse_task(", "parse_task"],
  ["selection = diversify(", "diversify"],
];

function parseArgs(argv) {
  const a = { out: path.join(BENCH_DIR, "out/extension_perf.json"), keep: false, vsix: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") a.out = path.resolve(argv[++i]);
    else if (argv[i] === "--keep") a.keep = true;
    else if (argv[i] === "-h" || argv[i] === "--help") a.help = true;
    else a.vsix = path.resolve(argv[i]);
  }
  return a;
}

// --- statistics -------------------------------------------------------------------------------------
/** Nearest-rank percentile: the smallest value with at least share·n values at or below it. */
function pct(values, share) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v[Math.max(0, Math.ceil(share * v.length) - 1)];
}
function stats(values) {
  const v = values.filter((x) => Number.isFinite(x));
  return { n: v.length, p50: pct(v, 0.5), p95: pct(v, 0.95), max: v.length ? Math.max(...v) : null };
}

// --- workspace, plan ---------------------------------------------------------------------------------
function makeWorkspace(dir) {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git -C "${REPO_DIR}" archive HEAD:server | tar -x -C "${dir}"`]);
  const git = (...args) =>
    execFileSync("git", args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "bench",
        GIT_AUTHOR_EMAIL: "bench@example.com",
        GIT_COMMITTER_NAME: "bench",
        GIT_COMMITTER_EMAIL: "bench@example.com",
      },
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "the smartctx server at the bench's HEAD");
  const files = execFileSync("git", ["ls-files"], { cwd: dir, encoding: "utf8" }).trim().split("\n");
  const py = files.filter((f) => f.endsWith(".py"));
  const loc = py.reduce((n, f) => n + fs.readFileSync(path.join(dir, f), "utf8").split("\n").length, 0);
  return { files: files.length, pyFiles: py.length, pyLines: loc, py: py.sort() };
}

function resolveHover(workspace, pyFiles, [needle, word]) {
  for (const file of pyFiles) {
    const lines = fs.readFileSync(path.join(workspace, file), "utf8").split("\n");
    const line = lines.findIndex((l) => l.includes(needle));
    if (line < 0) continue;
    const at = lines[line].indexOf(word, lines[line].indexOf(needle));
    if (at < 0) throw new Error(`hover position: no ${word} on ${file}:${line + 1}`);
    // The middle of the name (0-based line and character, as vscode.Position).
    return { file, line, character: at + Math.floor(word.length / 2), word };
  }
  throw new Error(`hover position: no line with ${JSON.stringify(needle)} in the workspace`);
}

// --- sizes -------------------------------------------------------------------------------------------
function vsixSizes(vsix) {
  const listing = execFileSync("unzip", ["-l", vsix], { encoding: "utf8" });
  const entry = (re) => {
    const m = listing.split("\n").find((l) => re.test(l));
    return m ? Number(m.trim().split(/\s+/)[0]) : null;
  };
  return {
    vsixBytes: fs.statSync(vsix).size,
    extensionJsBytes: entry(/ extension\/dist\/extension\.js$/),
    wheelBytes: entry(/ extension\/bundled\/.*\.whl$/),
    unpackedBytes: Number(listing.trim().split("\n").at(-1).trim().split(/\s+/)[0]),
  };
}

// --- the SmartCtx log ----------------------------------------------------------------------------------
/** Lines of the "SmartCtx" log channel: {at (epoch ms, local time as the extension host wrote it), text}. */
function parseLog(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = line.match(/^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3}) \[(\w+)\] (.*)$/);
    if (!m) continue;
    const [y, mo, d, h, mi, s, ms] = m.slice(1, 8).map(Number);
    out.push({ at: new Date(y, mo - 1, d, h, mi, s, ms).getTime(), level: m[8], text: m[9] });
  }
  return out;
}

/** The log lines matching `re` written while the in-host call `r` ran (log timestamps are ms). */
function linesDuring(lines, r, re) {
  return lines.filter((l) => l.at >= r.startedAt - 2 && l.at <= r.endedAt + 2 && re.test(l.text));
}

// The server's own line, as window/logMessage brings it (its stderr copy of the same line is skipped).
const SERVER_RE =
  /smartctx\.lsp\.server: contextForTask: (\d+) bodies, (\d+) summaries, (\d+) tokens, ([\d.]+) ms/;
const PANEL_RE =
  /panel: pack in (\d+) ms, rendered in (\d+) ms \((\d+) bodies, (\d+) summaries, (\d+) tokens\)/;
const CHAT_RE = /@smartctx: first reference streamed in (\d+) ms/;

// --- VS Code's own activation figure --------------------------------------------------------------------
/** "Developer: Show Running Extensions": code loading + activate() call time for SmartCtx, as shown. */
async function runningExtensionsActivation(wb) {
  await wb.runCommand("Developer: Show Running Extensions");
  const row = wb.page
    .locator(".extension")
    .filter({ has: wb.page.locator(".name", { hasText: /^\s*SmartCtx\s*$/ }) })
    .first();
  const text = await waitFor(
    "SmartCtx in Running Extensions",
    async () => {
      if (!(await row.count())) {
        // The list is virtual: scroll it until the row is rendered.
        await wb.page.mouse.move(700, 400);
        await wb.page.mouse.wheel(0, 300);
        return null;
      }
      const t = await row.locator(".activation-time").innerText({ timeout: 2000 });
      return /\d+ms/.test(t) && t;
    },
    { timeout: 30000, interval: 500 },
  );
  return { shown: text.trim(), ms: Number(text.match(/(\d+)ms/)[1]) };
}

// --- the real palette --------------------------------------------------------------------------------
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function smartctxLog(s) {
  const found = s.readLogs(/smartctx\.smartctx\/SmartCtx\.log$/);
  return found.length ? parseLog(found.map((f) => f.text).join("\n")) : [];
}

/**
 * "SmartCtx: Context for Task…" from the palette, the task typed into its input box, then Enter; the
 * time from Enter (this process's clock) to the extension's "panel: … rendered" log line (the
 * extension host's clock: the same machine's).
 */
async function paletteRuns(s, tasks) {
  const wb = s.wb;
  const out = [];
  for (const task of tasks) {
    const before = smartctxLog(s).filter((l) => PANEL_RE.test(l.text)).length;
    await wb.runCommand("SmartCtx: Context for Task…");
    const input = wb.quickInput().locator(".quick-input-box input");
    await waitFor("the task input box", async () => {
      if (!(await wb.quickInput().isVisible())) return false;
      return /Describe the task/.test(await wb.quickInput().innerText());
    });
    await input.fill(task);
    const enterAt = Date.now();
    await input.press("Enter");
    const line = await waitFor(
      "the panel's log line",
      () => smartctxLog(s).filter((l) => PANEL_RE.test(l.text))[before],
      { timeout: 30000, interval: 100 },
    );
    const m = line.text.match(PANEL_RE);
    out.push({ task, enterToRenderedMs: line.at - enterAt, packMs: +m[1], renderedMs: +m[2] });
    await sleep(500);
  }
  return out;
}

// --- main -------------------------------------------------------------------------------------------
async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.help || !a.vsix) {
    console.error("usage: run.sh [--out FILE] [--keep] smartctx.vsix");
    process.exit(2);
  }
  if (!fs.existsSync(a.vsix)) throw new Error(`no such vsix: ${a.vsix}`);
  const began = Date.now();
  const loadBefore = fs.readFileSync("/proc/loadavg", "utf8").trim();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-bench-ext-"));
  guardProcess({
    timeoutMs: Number(process.env.E2E_TIMEOUT_MS) || 900000,
    cleanup: () => a.keep || fs.rmSync(tmp, { recursive: true, force: true }),
  });
  if (a.keep) process.env.E2E_KEEP = "1";

  // The .vsix as it is now (a concurrent `npm run package` may rewrite it during the run).
  const vsix = path.join(tmp, "smartctx.vsix");
  fs.copyFileSync(a.vsix, vsix);
  const sizes = vsixSizes(vsix);
  const workspace = path.join(tmp, "server");
  const ws = makeWorkspace(workspace);
  log(`workspace: ${ws.pyFiles} Python files, ${ws.pyLines} lines (${workspace})`);

  const plan = {
    workspace,
    out: path.join(tmp, "inhost.json"),
    warmupTasks: WARMUP_TASKS,
    tasks: TASKS,
    warmupHovers: WARMUP_HOVERS.map((h) => resolveHover(workspace, ws.py, h)),
    hovers: HOVERS.map((h) => resolveHover(workspace, ws.py, h)),
    warmupChat: WARMUP_CHAT,
    chat: CHAT,
    settleMs: 3000,
    gapMs: 250,
  };
  const planFile = path.join(tmp, "plan.json");
  fs.writeFileSync(planFile, JSON.stringify(plan, null, 2));

  // The test-only extensions: the scripted model as it is, the self-test with our checks.js.
  const selfTestSrc = path.join(tmp, "self-test-bench");
  fs.cpSync(path.join(E2E_DIR, "extensions/self-test"), selfTestSrc, { recursive: true });
  fs.copyFileSync(path.join(BENCH_DIR, "perf_checks.js"), path.join(selfTestSrc, "checks.js"));
  const testExts = [
    await packageExtension(path.join(E2E_DIR, "extensions/scripted-model"), path.join(tmp, "vsix")),
    await packageExtension(selfTestSrc, path.join(tmp, "vsix")),
  ];

  // The 1-minute load average every 5 s while code-server runs: other work on the box shows here.
  const loadSamples = [];
  const loadTimer = setInterval(
    () => loadSamples.push(Number(fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0])),
    5000,
  );
  const selfTestFile = path.join(tmp, "selftest.json");
  const s = await Session.start({
    name: "extension-perf",
    workspace,
    vsix: [vsix, ...testExts],
    settings: {
      "smartctxE2e.selfTest.resultsFile": selfTestFile,
      "smartctxE2e.selfTest.task": WARMUP_TASKS[0],
      "smartctxE2e.selfTest.timeoutMs": 180000,
      // The server's contextForTask log line (its own time per request) reaches the SmartCtx log.
      "smartctx.server.logLevel": "info",
    },
    env: { SMARTCTX_BENCH_PLAN: planFile, SMARTCTX_E2E_MODEL_LOG: path.join(tmp, "model.jsonl") },
  });
  let report;
  let vscodeActivation = null;
  let logLines;
  let statusBar = [];
  let uiRuns = [];
  try {
    await s.wb.waitForStatusBar(/SmartCtx: [\d,]+ files/, { timeout: 120000 });
    log("index ready; the in-host checks run (20 tasks, 20 hovers, 5 chat requests)…");
    report = await waitFor(
      () =>
        `the self-test results (progress: ${fs.existsSync(plan.out) ? fs.readFileSync(plan.out, "utf8").length : 0} bytes)`,
      () => fs.existsSync(selfTestFile) && JSON.parse(fs.readFileSync(selfTestFile, "utf8")),
      { timeout: 600000, interval: 1000 },
    );
    for (const c of report.checks)
      log(`self-test ${c.ok ? "ok  " : "FAIL"} ${c.name} (${c.ms} ms): ${c.detail.split("\n")[0]}`);
    if (!report.ok)
      throw new Error(
        `in-host checks failed: ${report.checks
          .filter((c) => !c.ok)
          .map((c) => c.name)
          .join(", ")}`,
      );
    log("the real palette: 5 tasks typed into the input box…");
    uiRuns = await paletteRuns(s, UI_TASKS);
    try {
      vscodeActivation = await runningExtensionsActivation(s.wb);
      await s.screenshot("bench-running-extensions");
    } catch (err) {
      log(`VS Code's activation figure not read: ${err.message.split("\n")[0]}`);
    }
    // Every SmartCtx status bar text with the (browser) time it appeared, to date its changes.
    statusBar = (await s.page.evaluate(() => window.__e2eStatusBar || []))
      .map(({ at, text }) => ({ at, text: text.split(" | ").find((t) => /SmartCtx/.test(t)) }))
      .filter((e, i, all) => e.text && e.text !== all[i - 1]?.text);
    // The log channel writes its file shortly after each line: wait for the last chat line.
    logLines = await waitFor("the SmartCtx log to hold every chat line", () => {
      const lines = smartctxLog(s);
      return lines.filter((l) => CHAT_RE.test(l.text)).length >= WARMUP_CHAT.length + CHAT.length && lines;
    });
    fs.copyFileSync(s.readLogs(/smartctx\.smartctx\/SmartCtx\.log$/)[0].path, path.join(tmp, "SmartCtx.log"));
    log(`timings: ${JSON.stringify(s.timings)}; memory peak ${s.memoryReport()}`);
    await s.close();
  } catch (err) {
    if (fs.existsSync(plan.out)) fs.copyFileSync(plan.out, path.join(s.dirs.logs, "inhost.json"));
    await s.close({ error: err });
    throw err;
  }
  clearInterval(loadTimer);
  const loadAfterSession = fs.readFileSync("/proc/loadavg", "utf8").trim();

  log("baseline: the server's Workspace in process on the same workspace…");
  const baselineFile = path.join(tmp, "baseline.json");
  const packsFile = path.join(tmp, "packs.json");
  execFileSync(PYTHON, [path.join(BENCH_DIR, "server_inprocess.py"), planFile, baselineFile, packsFile], {
    stdio: "inherit",
  });
  const baseline = JSON.parse(fs.readFileSync(baselineFile, "utf8"));
  // The panel's HTML from those packs (render.ts, as the extension host runs it), timed in Node.
  const renderFile = path.join(tmp, "render.json");
  execFileSync(process.execPath, [path.join(BENCH_DIR, "render_time.mjs"), packsFile, renderFile], {
    stdio: "inherit",
  });
  const rendering = JSON.parse(fs.readFileSync(renderFile, "utf8"));
  const inhost = JSON.parse(fs.readFileSync(plan.out, "utf8"));

  // --- pair in-host calls with the log lines they caused ---
  const activatedLine = logLines.find((l) => /^activated in ([\d.]+) ms/.test(l.text));
  const panel = inhost.panel
    .filter((r) => !r.warmup)
    .map((r, i) => {
      const p = linesDuring(logLines, r, PANEL_RE);
      const sv = linesDuring(logLines, r, SERVER_RE);
      if (p.length !== 1 || sv.length !== 1)
        throw new Error(`task ${i}: ${p.length} panel and ${sv.length} server log lines during the call`);
      const pm = p[0].text.match(PANEL_RE);
      const sm = sv[0].text.match(SERVER_RE);
      return {
        task: r.task,
        wallMs: r.ms,
        packMs: +pm[1],
        renderedMs: +pm[2],
        webviewMs: +pm[2] - +pm[1],
        serverMs: +sm[4],
        bodies: +pm[3],
        summaries: +pm[4],
        tokens: +pm[5],
        inprocessMs: baseline.packs[i].contextMs,
        inprocessEncodeMs: baseline.packs[i].encodeMs,
        wireBytes: baseline.packs[i].wireBytes,
        htmlMs: rendering[i].ms,
        htmlBytes: rendering[i].htmlBytes,
        renderTimedOut: +pm[2] - +pm[1] >= 4900,
        // The in-process baseline made the same pack (same token count): the same request.
        samePack: +pm[5] === baseline.packs[i].tokens && +pm[3] === baseline.packs[i].bodies,
      };
    });
  const hover = inhost.hover
    .filter((r) => !r.warmup)
    .map((r, i) => ({
      at: `${r.file}:${r.line + 1} ${r.word}`,
      ms: r.ms,
      chars: r.chars,
      inprocessMs: baseline.hovers[i].ms,
      inprocessChars: baseline.hovers[i].chars,
    }));
  const chat = inhost.chat
    .filter((r) => !r.warmup)
    .map((r, i) => {
      const c = linesDuring(logLines, r, CHAT_RE);
      const sv = linesDuring(logLines, r, SERVER_RE);
      if (c.length !== 1 || sv.length !== 1)
        throw new Error(
          `chat ${i}: ${c.length} participant and ${sv.length} server log lines during the call`,
        );
      return {
        prompt: r.prompt,
        firstReferenceMs: +c[0].text.match(CHAT_RE)[1],
        sentToFirstReferenceMs: c[0].at - r.startedAt,
        wholeResponseMs: r.ms,
        // VS Code's own timing of the request (chat result): to the first progress, and in all.
        vscodeFirstProgressMs: r.timings?.firstProgress ?? null,
        vscodeTotalElapsedMs: r.timings?.totalElapsed ?? null,
        serverMs: +sv[0].text.match(SERVER_RE)[4],
        inprocessMs: baseline.chat[i].contextMs,
      };
    });
  const col = (rows, k) => rows.map((r) => r[k]);
  const diff = (rows, a, b) => rows.map((r) => r[a] - r[b]);
  const ratio = (rows, a, b) => rows.map((r) => r[a] / r[b]);
  const summary = {
    activation: {
      logMs: activatedLine ? Number(activatedLine.text.match(/([\d.]+) ms/)[1]) : null,
      vscode: vscodeActivation,
    },
    panel: {
      wall: stats(col(panel, "wallMs")),
      pack: stats(col(panel, "packMs")),
      webview: stats(col(panel, "webviewMs")),
      logged: stats(col(panel, "renderedMs")),
      server: stats(col(panel, "serverMs")),
      inprocess: stats(col(panel, "inprocessMs")),
      html: stats(col(panel, "htmlMs")),
      htmlBytes: stats(col(panel, "htmlBytes")),
      wireBytes: stats(col(panel, "wireBytes")),
      overheadMs: stats(diff(panel, "wallMs", "serverMs")),
      ratio: stats(ratio(panel, "wallMs", "serverMs")),
      renderTimeouts: panel.filter((r) => r.renderTimedOut).length,
      samePackInProcess: panel.filter((r) => r.samePack).length,
    },
    palette: {
      enterToRendered: stats(col(uiRuns, "enterToRenderedMs")),
      pack: stats(col(uiRuns, "packMs")),
      logged: stats(col(uiRuns, "renderedMs")),
    },
    hover: {
      wall: stats(col(hover, "ms")),
      inprocess: stats(col(hover, "inprocessMs")),
      overheadMs: stats(diff(hover, "ms", "inprocessMs")),
      ratio: stats(ratio(hover, "ms", "inprocessMs")),
      empty: hover.filter((h) => !h.chars).length,
    },
    chat: {
      firstReference: stats(col(chat, "firstReferenceMs")),
      sentToFirstReference: stats(col(chat, "sentToFirstReferenceMs")),
      wholeResponse: stats(col(chat, "wholeResponseMs")),
      vscodeFirstProgress: stats(col(chat, "vscodeFirstProgressMs")),
      server: stats(col(chat, "serverMs")),
      inprocess: stats(col(chat, "inprocessMs")),
      overheadMs: stats(diff(chat, "firstReferenceMs", "serverMs")),
    },
    sizes,
  };

  const result = {
    when: new Date(began).toISOString(),
    commit: execFileSync("git", ["-C", REPO_DIR, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
    }).trim(),
    // Uncommitted changes of the working tree the bench ran from (its own folder aside); the .vsix
    // may come from elsewhere (e.g. a frozen copy of HEAD).
    dirty: execFileSync("git", ["-C", REPO_DIR, "status", "--porcelain", "client-vscode", "server"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter((l) => l.trim() && !l.includes("client-vscode/bench/")),
    vsix: a.vsix,
    loadavgBefore: loadBefore,
    loadavgAfterSession: loadAfterSession,
    loadDuringSession: { samples: loadSamples, max: Math.max(...loadSamples) },
    vscodeVersion: inhost.vscodeVersion,
    workspace: {
      what: "git archive HEAD:server",
      files: ws.files,
      pyFiles: ws.pyFiles,
      pyLines: ws.pyLines,
      indexSecondsInProcess: baseline.indexSeconds,
    },
    session: { timings: s.timings, memoryPeak: s.memoryReport(), statusBar },
    summary,
    panel,
    palette: uiRuns,
    hover,
    chat,
  };
  fs.mkdirSync(path.dirname(a.out), { recursive: true });
  fs.writeFileSync(a.out, JSON.stringify(result, null, 2));
  printTable(result);
  log(`wrote ${a.out} (${((Date.now() - began) / 1000).toFixed(0)} s)`);
  if (a.keep) log(`kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}

function printTable(r) {
  const S = r.summary;
  const f = (v, d = 0) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
  const three = (st, d = 0) => [f(st.p50, d), f(st.p95, d), f(st.max, d)];
  const kb = (b) => `${(b / 1024).toFixed(0)} KiB`;
  const rows = [
    ["activation: activate() (log)", 1, f(S.activation.logMs, 1), "", "", "", "≤ 200 ms"],
    [
      "activation: code load + activate() (VS Code)",
      S.activation.vscode ? 1 : 0,
      f(S.activation.vscode?.ms),
      "",
      "",
      "",
      "≤ 200 ms",
    ],
    [
      "panel: executeCommand → rendered (in host)",
      S.panel.wall.n,
      ...three(S.panel.wall),
      `${f(S.panel.overheadMs.p50)} / ${f(S.panel.overheadMs.p95)} ms over server; ×${f(S.panel.ratio.p50, 1)}`,
      "p95 ≤ 500 ms",
    ],
    ["· logged: request → webview rendered", S.panel.logged.n, ...three(S.panel.logged), "", ""],
    ["· pack answered (log)", S.panel.pack.n, ...three(S.panel.pack), "", ""],
    ["· webview rendered after the pack (log)", S.panel.webview.n, ...three(S.panel.webview), "", ""],
    [
      `· of which the panel's HTML (render.ts in Node; ${f(S.panel.htmlBytes.p50 / 1024)} KiB p50)`,
      S.panel.html.n,
      ...three(S.panel.html, 1),
      "",
      "",
    ],
    [
      "· server: contextForTask (its log, same requests)",
      S.panel.server.n,
      ...three(S.panel.server),
      "baseline",
      "",
    ],
    [
      "· server in process: Workspace.context",
      S.panel.inprocess.n,
      ...three(S.panel.inprocess),
      "baseline",
      "",
    ],
    [
      "palette UI: Enter in the input box → rendered",
      S.palette.enterToRendered.n,
      ...three(S.palette.enterToRendered),
      "",
      "p95 ≤ 500 ms",
    ],
    ["· logged: request → webview rendered", S.palette.logged.n, ...three(S.palette.logged), "", ""],
    [
      "hover: executeHoverProvider",
      S.hover.wall.n,
      ...three(S.hover.wall),
      `${f(S.hover.overheadMs.p50)} / ${f(S.hover.overheadMs.p95)} ms over in-process; ×${f(S.hover.ratio.p50, 1)}`,
      "",
    ],
    [
      "· server in process: symbol_at + markdown",
      S.hover.inprocess.n,
      ...three(S.hover.inprocess),
      "baseline",
      "",
    ],
    [
      "@smartctx: handler → first reference (log)",
      S.chat.firstReference.n,
      ...three(S.chat.firstReference),
      `${f(S.chat.overheadMs.p50)} / ${f(S.chat.overheadMs.p95)} ms over server`,
      "",
    ],
    [
      "· chat.open sent → first reference",
      S.chat.sentToFirstReference.n,
      ...three(S.chat.sentToFirstReference),
      "",
      "",
    ],
    [
      "· VS Code: request → first progress (chat result timings)",
      S.chat.vscodeFirstProgress.n,
      ...three(S.chat.vscodeFirstProgress),
      "",
      "",
    ],
    ["· whole response (scripted model)", S.chat.wholeResponse.n, ...three(S.chat.wholeResponse), "", ""],
    ["· server: contextForTask (its log)", S.chat.server.n, ...three(S.chat.server), "baseline", ""],
    ["bundle: dist/extension.js (in the .vsix)", "", kb(S.sizes.extensionJsBytes), "", "", "", "≤ 1 MB"],
    [
      "bundle: smartctx.vsix (wheel inside: " + kb(S.sizes.wheelBytes) + ")",
      "",
      kb(S.sizes.vsixBytes),
      "",
      "",
      "",
      "",
    ],
  ];
  const head = ["measure", "n", "p50 ms", "p95 ms", "max ms", "vs baseline (p50 / p95)", "target"];
  const lines = [head, head.map(() => "---"), ...rows].map((row) => `| ${row.join(" | ")} |`);
  console.log(
    `\nextension_perf: ${path.basename(r.vsix)} (working tree at ${r.commit}${r.dirty.length ? ` + ${r.dirty.length} uncommitted client/server files` : ""}), ` +
      `VS Code ${r.vscodeVersion}, ${r.workspace.pyFiles} Python files / ${r.workspace.pyLines} lines; ` +
      `load average ${r.loadavgBefore.split(" ").slice(0, 3).join(" ")} before, 1-min up to ${r.loadDuringSession.max} during the session\n`,
  );
  console.log(lines.join("\n"));
  console.log(
    `\nwebview render waits that hit the 5 s fallback: ${S.panel.renderTimeouts}; in-process packs equal to the ` +
      `server's: ${S.panel.samePackInProcess}/${S.panel.wall.n}; empty hovers: ${S.hover.empty}; ` +
      `session ${JSON.stringify(r.session.timings)}, memory peak ${r.session.memoryPeak}\n`,
  );
}

main().catch((err) => {
  if (!/^step |deadline|interrupted/.test(err.message)) console.error(err.stack || err);
  void exitAfterTeardown(1, err.message);
});
