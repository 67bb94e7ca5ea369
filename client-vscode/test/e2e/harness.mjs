// The real-VS-Code e2e harness: code-server (VS Code 1.139.1 in the browser, from scripts/toolchain.sh)
// driven by playwright-core and Debian's Chromium, all state in one temp folder, always torn down.
//
//   const s = await Session.start({ workspace, vsix: [...], settings: {...}, name: 'palette' });
//   try { await s.wb.runCommand('SmartCtx: Re-index'); ... await s.close(); }
//   catch (e) { await s.close({ error: e }); throw e; }   // keeps screenshots + logs, prints the folder
//
// Recipe and pitfalls: ../../../../shared/vscode-e2e.md (outside the repo, on the dev machines).
import { chromium } from "playwright-core";
import { spawn, execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const CLIENT_DIR = path.resolve(E2E_DIR, "../..");
export const REPO_DIR = path.resolve(CLIENT_DIR, "..");
export const TOOLS_DIR = path.join(CLIENT_DIR, ".tools");
export const NODE24 = path.join(TOOLS_DIR, "node/bin/node");
export const CODE_SERVER = path.join(TOOLS_DIR, "code-server/node_modules/code-server/out/node/entry.js");
export const CHROMIUM = process.env.E2E_CHROMIUM || "/usr/bin/chromium";
export const SCREENSHOTS_DIR = path.join(E2E_DIR, "screenshots");
export const OUT_DIR = path.join(E2E_DIR, "out");
export const PYTHON = process.env.E2E_PYTHON || path.join(REPO_DIR, ".venv/bin/python");

const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const BASE_SETTINGS = {
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "security.workspace.trust.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "editor.hover.delay": 100,
  // Typed text lands as typed: no auto-closed quotes or brackets, no suggestion eating an Enter.
  "editor.autoClosingBrackets": "never",
  "editor.autoClosingQuotes": "never",
  "editor.autoSurround": "never",
  "editor.quickSuggestions": { other: false, comments: false, strings: false },
  "editor.suggestOnTriggerCharacters": false,
  "editor.acceptSuggestionOnEnter": "off",
  "editor.formatOnType": false,
  // VS Code in a browser defaults to autoSave afterDelay; tests of unsaved buffers need it off.
  "files.autoSave": "off",
  "smartctx.server.python": PYTHON,
};

const t0 = Date.now();
export function log(msg) {
  console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A sleep that does not keep the process alive (for races against teardown). */
const grace = (ms) => new Promise((r) => setTimeout(r, ms).unref());

/** Polls fn until it returns something truthy; `what` (a string, or a function for a late message) names it. */
export async function waitFor(what, fn, { timeout = 30000, interval = 250 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeout} ms waiting for ${typeof what === "function" ? what() : what}${last ? `: ${last.message}` : ""}`,
      );
    await sleep(interval);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// --- processes ------------------------------------------------------------------------------------
// A session's processes: those whose environment holds SMARTCTX_E2E_RUN=<id> (code-server, its extension
// host, our Python server, Chromium's browser process) and all their descendants (Chromium's zygote and
// renderers start with a clean environment). The sampler remembers every one it saw (pid + start time,
// so a reused pid is never hit), and teardown SIGKILLs whatever of them is still alive.
function procStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), start: f[19] };
  } catch {
    return null;
  }
}

function sessionProcesses(marker) {
  const needle = Buffer.from(`SMARTCTX_E2E_RUN=${marker}\0`);
  const children = new Map();
  const found = new Map();
  const queue = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const st = procStat(pid);
    if (!st) continue;
    if (!children.has(st.ppid)) children.set(st.ppid, []);
    children.get(st.ppid).push([pid, st.start]);
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`).includes(needle)) queue.push([pid, st.start]);
    } catch {
      /* gone, or not ours */
    }
  }
  while (queue.length) {
    const [pid, start] = queue.pop();
    if (found.has(pid)) continue;
    found.set(pid, start);
    queue.push(...(children.get(pid) || []));
  }
  return found;
}

function pssKb(pid) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** chromium, python (our server) or code-server (server, extension host, agent host, pty host). */
function processKind(pid) {
  let cmd = "";
  try {
    cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0];
  } catch {
    return "?";
  }
  if (/chrom/i.test(cmd)) return "chromium";
  if (/python/i.test(cmd)) return "python";
  if (/node$/.test(cmd) || /copilot|code-server/.test(cmd)) return "code-server";
  return path.basename(cmd) || comm(pid);
}

function comm(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

// --- the process guard ----------------------------------------------------------------------------
// The process leaves only through exitAfterTeardown: every live session closed (processes killed,
// artifacts kept on failure), then the runner's cleanup, then exit. Playwright's own signal handlers
// are off (they would exit mid-teardown and leave code-server running).
const liveSessions = new Set();
let processCleanup = () => {};
let teardown = null;
let firstExitCode = null;

export function exitAfterTeardown(code, why) {
  if (!teardown) {
    firstExitCode = code;
    teardown = (async () => {
      const sessions = [...liveSessions];
      for (const s of sessions) await s.close({ error: new Error(why) }).catch(() => {});
      try {
        processCleanup();
      } catch {
        /* best effort */
      }
    })();
  }
  return teardown.then(() => process.exit(firstExitCode));
}

/**
 * Ctrl-C, SIGTERM/SIGHUP (CI timeouts), crashes and a deadline all go through exitAfterTeardown;
 * call it first thing, with what to remove besides the sessions' own temp folders.
 */
export function guardProcess({ timeoutMs, cleanup = () => {} } = {}) {
  processCleanup = cleanup;
  const ms = timeoutMs || Number(process.env.E2E_TIMEOUT_MS) || 300000;
  const bail = (why, code) => {
    if (!liveSessions.size && !teardown) console.error(`e2e: ${why}`);
    void exitAfterTeardown(code, why);
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.on(sig, () => bail(`interrupted by ${sig}`, 130));
  process.on("uncaughtException", (err) => bail(`uncaught: ${err.stack || err}`, 1));
  process.on("unhandledRejection", (err) => bail(`unhandled rejection: ${err?.stack || err}`, 1));
  setTimeout(() => bail(`e2e deadline of ${ms} ms passed (E2E_TIMEOUT_MS)`, 1), ms).unref();
}

// --- the session ----------------------------------------------------------------------------------
export class Session {
  /**
   * @param {object} o
   * @param {string} o.workspace  folder to open
   * @param {string[]} [o.vsix]   .vsix files to install first
   * @param {object} [o.settings] user settings on top of BASE_SETTINGS
   * @param {object} [o.env]      extra environment for code-server (and so the extension host)
   * @param {string[]} [o.proposedApi] extension ids for --enable-proposed-api
   * @param {string} [o.name]     names the failure folder
   */
  static async start(o) {
    const s = new Session(o);
    try {
      await s._start();
      return s;
    } catch (err) {
      await s.close({ error: err });
      throw err;
    }
  }

  constructor(o) {
    this.o = { vsix: [], settings: {}, env: {}, proposedApi: ["smartctx.smartctx"], name: "e2e", ...o };
    this.id = `${process.pid}-${Date.now().toString(36)}`;
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-e2e-"));
    this.dirs = {};
    for (const d of ["ud", "ext", "config", "data", "cache", "tmp", "home", "chromium", "logs"]) {
      this.dirs[d] = path.join(this.tmp, d);
      fs.mkdirSync(this.dirs[d], { recursive: true });
    }
    this.screenshots = [];
    this.seen = new Map(); // pid -> start time of every process of this session seen so far
    this.timings = {};
    this.memory = { peakKb: 0, peakByComm: {} };
    this.closed = false;
    liveSessions.add(this);
  }

  env() {
    const env = {};
    for (const [k, v] of Object.entries(process.env)) {
      // A VS Code terminal's variables would make code-server's CLI talk to that VS Code instead.
      if (/^(VSCODE_|ELECTRON_|npm_)/.test(k)) continue;
      env[k] = v;
    }
    return {
      ...env,
      PATH: `${path.dirname(NODE24)}:${process.env.PATH}`,
      HOME: this.dirs.home,
      XDG_CONFIG_HOME: this.dirs.config,
      XDG_DATA_HOME: this.dirs.data,
      XDG_CACHE_HOME: this.dirs.cache,
      TMPDIR: this.dirs.tmp,
      // A dead loopback port: no marketplace traffic, no waiting on DNS.
      EXTENSIONS_GALLERY: JSON.stringify({
        serviceUrl: "http://127.0.0.1:9/gallery",
        itemUrl: "http://127.0.0.1:9/item",
        resourceUrlTemplate: "http://127.0.0.1:9/r/{publisher}/{name}/{version}/{path}",
        controlUrl: "",
        nlsBaseUrl: "",
      }),
      SMARTCTX_E2E_RUN: this.id,
      ...this.o.env,
    };
  }

  async _start() {
    if (!fs.existsSync(NODE24) || !fs.existsSync(CODE_SERVER)) {
      throw new Error("code-server toolchain missing: run client-vscode/scripts/toolchain.sh");
    }
    const began = Date.now();
    this.port = await freePort();
    const config = path.join(this.tmp, "config.yaml");
    fs.writeFileSync(config, `bind-addr: 127.0.0.1:${this.port}\nauth: none\ncert: false\n`);
    // The same settings as User and as Machine (code-server's "Remote" settings): VS Code ignores
    // machine-scoped settings (e.g. smartctx.server.python, "machine-overridable") in User settings
    // when the extension host is remote, as it is in code-server.
    this.settingsFiles = ["User", "Machine"].map((d) => path.join(this.dirs.ud, d, "settings.json"));
    this.settingsFile = this.settingsFiles[0];
    for (const f of this.settingsFiles) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, JSON.stringify({ ...BASE_SETTINGS, ...this.o.settings }, null, 2));
    }
    const common = ["--config", config, "--user-data-dir", this.dirs.ud, "--extensions-dir", this.dirs.ext];
    const env = this.env();

    this.common = common;
    if (this.o.vsix.length) {
      await this.installExtensions(this.o.vsix);
      this.timings.installMs = Date.now() - began;
      log(`installed ${this.o.vsix.map((v) => path.basename(v)).join(", ")} (${this.timings.installMs} ms)`);
    }

    const csLog = fs.openSync(path.join(this.dirs.logs, "code-server.log"), "a");
    const args = [
      CODE_SERVER,
      ...common,
      "--bind-addr",
      `127.0.0.1:${this.port}`,
      "--auth",
      "none",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--reconnection-grace-time",
      "5",
      ...this.o.proposedApi.flatMap((id) => ["--enable-proposed-api", id]),
      this.o.workspace,
    ];
    const csStart = Date.now();
    // Own process group, so teardown can signal code-server and everything it forked at once.
    this.cs = spawn(NODE24, args, { env, detached: true, stdio: ["ignore", csLog, csLog] });
    fs.closeSync(csLog);
    this.csExit = new Promise((resolve) => this.cs.once("exit", (code, signal) => resolve({ code, signal })));
    this.cs.once("exit", (code, signal) => {
      if (!this.closed) log(`code-server exited early (code ${code}, signal ${signal}); see its log`);
    });
    this._sampleMemory();
    this.memTimer = setInterval(() => this._sampleMemory(), 1000);

    const base = `http://127.0.0.1:${this.port}`;
    await waitFor(
      "code-server to answer /healthz",
      async () => {
        if (this.cs.exitCode !== null) throw new Error(`code-server exited with ${this.cs.exitCode}`);
        const r = await fetch(`${base}/healthz`);
        return r.ok;
      },
      { timeout: 30000, interval: 200 },
    );
    this.timings.codeServerUpMs = Date.now() - csStart;

    this.context = await chromium.launchPersistentContext(this.dirs.chromium, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      env: { ...env, HOME: this.dirs.home },
      viewport: { width: 1440, height: 900 },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 60000,
    });
    this.page = this.context.pages()[0] || (await this.context.newPage());
    const consoleLog = fs.createWriteStream(path.join(this.dirs.logs, "browser-console.log"));
    this.page.on("console", (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
    this.page.on("pageerror", (e) => consoleLog.write(`[pageerror] ${e.stack || e}\n`));

    // From the first paint on, record every change of the status bar's text (window.__e2eStatusBar), so
    // a test can prove a sequence such as "indexing" -> "ready" that may pass faster than any poll.
    await this.page.addInitScript(() => {
      if (window.top !== window) return;
      const history = (window.__e2eStatusBar = []);
      let observed = null;
      const snap = () => {
        const bar = document.querySelector(".part.statusbar");
        if (!bar) return;
        if (observed !== bar) {
          observed = bar;
          new MutationObserver(snap).observe(bar, { subtree: true, childList: true, characterData: true });
        }
        const text = [...bar.querySelectorAll(".statusbar-item")]
          .map((e) => e.innerText.trim())
          .filter(Boolean)
          .join(" | ");
        if (history.length < 2000 && history[history.length - 1]?.text !== text)
          history.push({ at: Date.now(), text });
      };
      new MutationObserver(() => observed || snap()).observe(document, { subtree: true, childList: true });
    });
    const gotoAt = Date.now();
    await this.page.goto(`${base}/?folder=${encodeURIComponent(this.o.workspace)}`, { timeout: 60000 });
    this.wb = new Workbench(this);
    await this.wb.waitReady();
    this.timings.workbenchMs = Date.now() - gotoAt;
    this.timings.startToWorkbenchMs = Date.now() - csStart;
    log(
      `workbench visible ${this.timings.workbenchMs} ms after page.goto (${this.timings.startToWorkbenchMs} ms after code-server start)`,
    );
  }

  /**
   * Installs .vsix files with code-server's CLI into this session's extensions folder; a running
   * workbench sees them once reloaded (as after an extension update).
   */
  async installExtensions(vsix) {
    const args = [
      CODE_SERVER,
      ...this.common,
      ...vsix.flatMap((v) => ["--install-extension", path.resolve(v)]),
      "--force",
    ];
    const logFile = path.join(this.dirs.logs, "install-extension.log");
    const { stdout, stderr } = await promisify(execFile)(NODE24, args, {
      env: this.env(),
      timeout: 120000,
    }).catch((err) => {
      fs.appendFileSync(logFile, `${err.stdout}\n${err.stderr}`);
      throw new Error(`code-server --install-extension failed: ${err.stderr || err.message}`);
    });
    fs.appendFileSync(logFile, `${stdout}\n${stderr}`);
  }

  _sampleMemory() {
    let total = 0;
    const byComm = {};
    const procs = sessionProcesses(this.id);
    for (const [pid, start] of procs) this.seen.set(pid, start);
    for (const pid of procs.keys()) {
      const kb = pssKb(pid);
      total += kb;
      const c = processKind(pid);
      byComm[c] = (byComm[c] || 0) + kb;
    }
    if (total > this.memory.peakKb) this.memory = { peakKb: total, peakByComm: byComm };
  }

  memoryReport() {
    const mb = (kb) => `${Math.round(kb / 1024)} MB`;
    return `${mb(this.memory.peakKb)} PSS (${Object.entries(this.memory.peakByComm)
      .map(([c, kb]) => `${c} ${mb(kb)}`)
      .join(", ")})`;
  }

  /** Writes PNG to screenshots/<step>.png and returns its path. */
  async screenshot(step) {
    fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
    const file = path.join(SCREENSHOTS_DIR, `${step.replace(/[^\w.-]+/g, "-")}.png`);
    await this.page.screenshot({ path: file, timeout: 15000 });
    this.screenshots.push(file);
    return file;
  }

  /** Merges settings into the User and Machine settings.json (VS Code picks the change up by itself). */
  updateSettings(patch) {
    for (const f of this.settingsFiles) {
      const cur = JSON.parse(fs.readFileSync(f, "utf8"));
      fs.writeFileSync(f, JSON.stringify({ ...cur, ...patch }, null, 2));
    }
  }

  /** The text of every log file under the user-data-dir whose path matches `re` (e.g. /SmartCtx/). */
  readLogs(re) {
    const out = [];
    const walk = (d) => {
      for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (re.test(p)) out.push({ path: p, text: fs.readFileSync(p, "utf8") });
      }
    };
    walk(path.join(this.dirs.ud, "logs"));
    return out;
  }

  /**
   * Tears everything down; idempotent. With `error`: screenshot the failure, copy code-server's output,
   * the user-data-dir logs (extension host, output channels incl. "SmartCtx"), the browser console and
   * this run's screenshots to test/e2e/out/<name>-<time>/, and print that path.
   */
  async close({ error, keep = !!process.env.E2E_KEEP } = {}) {
    if (this.closed) return this.artifacts;
    this.closed = true;
    liveSessions.delete(this);
    if (error && this.page) {
      try {
        await this.screenshot(`${this.o.name}-FAILED`);
      } catch {
        /* the page may be gone */
      }
    }
    if (this.memTimer) clearInterval(this.memTimer);
    if (this.context) {
      await Promise.race([this.context.close().catch(() => {}), grace(10000)]);
    }
    if (this.cs && this.cs.exitCode === null && this.cs.signalCode === null) {
      try {
        process.kill(-this.cs.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
      await Promise.race([this.csExit, grace(5000)]);
    }
    // Whatever is left of this run (the extension host, our Python server, Chromium helpers): SIGKILL.
    const alive = () => {
      for (const [pid, start] of sessionProcesses(this.id)) this.seen.set(pid, start);
      return [...this.seen].filter(([pid, start]) => procStat(pid)?.start === start).map(([pid]) => pid);
    };
    for (let i = 0; i < 20; i++) {
      const left = alive();
      if (!left.length) break;
      if (i === 0 && process.env.E2E_DEBUG)
        log(`killing leftovers: ${left.map((p) => `${p}:${comm(p)}`).join(" ")}`);
      for (const pid of left) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
      await sleep(250);
    }
    const left = alive();
    if (left.length) log(`WARNING: processes still alive after teardown: ${left.join(" ")}`);

    if (error) {
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      this.artifacts = path.join(OUT_DIR, `${this.o.name}-${stamp}`);
      await this._collect(this.artifacts, error);
      console.error(
        `\ne2e FAILED (${this.o.name}): ${error.message.split("\n")[0]}\n  screenshots and logs: ${this.artifacts}\n`,
      );
    }
    if (keep) log(`kept the session's temp folder: ${this.tmp}`);
    else await fsp.rm(this.tmp, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    return this.artifacts;
  }

  async _collect(dir, error) {
    await fsp.mkdir(path.join(dir, "screenshots"), { recursive: true });
    await fsp.writeFile(path.join(dir, "error.txt"), `${error.stack || error}\n`);
    await fsp.cp(this.dirs.logs, dir, { recursive: true }).catch(() => {});
    await fsp
      .cp(path.join(this.dirs.ud, "logs"), path.join(dir, "user-data-dir-logs"), { recursive: true })
      .catch(() => {});
    if (this.settingsFile)
      await fsp.copyFile(this.settingsFile, path.join(dir, "settings.json")).catch(() => {});
    for (const f of this.screenshots)
      await fsp.copyFile(f, path.join(dir, "screenshots", path.basename(f))).catch(() => {});
    // Output channels are files named like "1-SmartCtx.log" under .../exthost/output_logging_*/: list them.
    const channels = this.readLogs(/output_logging_|exthost\d*\/[^/]+\/[^/]+\.log$|exthost\.log$/).map((l) =>
      path.relative(this.dirs.ud, l.path),
    );
    await fsp.writeFile(
      path.join(dir, "INDEX.txt"),
      [
        `failure: ${error.message}`,
        "files: code-server.log (its stdout/stderr), install-extension.log, browser-console.log, error.txt,",
        "       screenshots/, user-data-dir-logs/ (extension host log, output channels):",
        ...channels.map((c) => `  ${c}`),
        "",
      ].join("\n"),
    );
  }
}

// --- the workbench --------------------------------------------------------------------------------
export class Workbench {
  constructor(session) {
    this.s = session;
    this.page = session.page;
  }

  async waitReady(timeout = 60000) {
    const p = this.page;
    await p.locator(".monaco-workbench .part.statusbar").waitFor({ state: "visible", timeout });
    await p.locator(".monaco-workbench .part.editor").waitFor({ state: "visible", timeout });
    await p
      .locator(".monaco-workbench .part.activitybar, .monaco-workbench .part.sidebar")
      .first()
      .waitFor({ state: "visible", timeout });
  }

  quickInput() {
    return this.page.locator(".quick-input-widget");
  }

  async closeQuickInput() {
    for (let i = 0; i < 3 && (await this.quickInput().isVisible()); i++) {
      await this.page.keyboard.press("Escape");
      await sleep(150);
    }
  }

  /** Opens the palette with `text` typed (no '>' for files, ':' for lines); returns the quick input. */
  async _palette(text) {
    await this.closeQuickInput();
    await this.page.keyboard.press("F1");
    const input = this.quickInput().locator(".quick-input-box input");
    await input.waitFor({ state: "visible", timeout: 5000 });
    await input.fill(text);
    return input;
  }

  /** Runs a command by its palette label ("Category: Title"); retries until the row appears. */
  async runCommand(label, { timeout = 30000 } = {}) {
    const deadline = Date.now() + timeout;
    const exact = new RegExp(`^\\s*${escapeRe(label)}\\s*$`);
    for (;;) {
      try {
        await this._palette(`>${label}`);
        const row = this.quickInput()
          .locator(".monaco-list-row")
          .filter({ has: this.page.locator(".label-name", { hasText: exact }) })
          .first();
        await row.waitFor({ state: "visible", timeout: 2000 });
        await row.click({ timeout: 2000 });
        return;
      } catch (err) {
        if (Date.now() > deadline) {
          await this.closeQuickInput();
          throw new Error(
            `command "${label}" not found in the palette within ${timeout} ms (${err.message.split("\n")[0]})`,
          );
        }
        await sleep(500);
      }
    }
  }

  /** Waits for an input box whose prompt, title or placeholder contains `prompt`, then enters `value`. */
  async inputBox(prompt, value, { timeout = 15000 } = {}) {
    const input = this.quickInput().locator(".quick-input-box input");
    await waitFor(
      `an input box with "${prompt}"`,
      async () => {
        if (!(await this.quickInput().isVisible())) return false;
        const text = await this.quickInput().innerText();
        const ph = (await input.getAttribute("placeholder")) || "";
        const aria = (await input.getAttribute("aria-label")) || "";
        return [text, ph, aria].some((t) => t.includes(prompt));
      },
      { timeout },
    );
    await input.fill(value);
    await input.press("Enter");
    await this.quickInput()
      .waitFor({ state: "hidden", timeout: 5000 })
      .catch(() => {});
  }

  /** Picks an item of an open quick pick by its label. */
  /**
   * Picks an item of the quick pick whose title or placeholder contains `prompt` (so a row of the
   * palette that opened it is never taken for it) by the exact text of the item's label.
   */
  async quickPick(prompt, label, { timeout = 15000 } = {}) {
    const input = this.quickInput().locator(".quick-input-box input");
    await waitFor(
      `a quick pick with "${prompt}"`,
      async () => {
        if (!(await this.quickInput().isVisible())) return false;
        const text = await this.quickInput().innerText();
        const ph = (await input.getAttribute("placeholder")) || "";
        return text.includes(prompt) || ph.includes(prompt);
      },
      { timeout },
    );
    const row = this.quickInput()
      .locator(".monaco-list-row")
      .filter({ visible: true })
      .filter({
        has: this.page.locator(".label-name", { hasText: new RegExp(`^\\s*${escapeRe(label)}\\s*$`) }),
      })
      .first();
    await row.waitFor({ state: "visible", timeout });
    await row.click();
  }

  /** innerText of a workbench part (default: all of it). */
  async text(selector = ".monaco-workbench") {
    return this.page.locator(selector).first().innerText({ timeout: 5000 });
  }

  /** Every status bar item text matching `re`, in the order shown since the page loaded (deduplicated). */
  async statusBarHistory(re) {
    const history = await this.page.evaluate(() => window.__e2eStatusBar || []);
    const seen = [];
    for (const { text } of history) {
      for (const item of text.split(" | "))
        if (re.test(item) && seen[seen.length - 1] !== item) seen.push(item);
    }
    return seen;
  }

  async statusBarText() {
    return this.text(".part.statusbar");
  }

  /** Waits until the status bar text matches `re`; returns the text. */
  async waitForStatusBar(re, { timeout = 60000 } = {}) {
    let last = "";
    return waitFor(
      () => `status bar to match ${re} (last: ${JSON.stringify(last)})`,
      async () => {
        last = await this.statusBarText();
        return re.test(last) && last;
      },
      { timeout },
    );
  }

  /** The tooltip of the status bar item whose text matches `re`, once the tooltip matches `expect`. */
  async statusBarTooltip(re, expect, { timeout = 15000 } = {}) {
    const item = this.page.locator(".part.statusbar .statusbar-item").filter({ hasText: re }).first();
    let last = "";
    return waitFor(
      () => `the tooltip of the status bar item ${re} to match ${expect} (last: ${JSON.stringify(last)})`,
      async () => {
        // Away and back: each attempt is a fresh hover, with the item's tooltip of now.
        await this.page.mouse.move(0, 0);
        await item.hover();
        const hover = this.page.locator(".workbench-hover, .monaco-hover").filter({ visible: true }).first();
        await hover.waitFor({ state: "visible", timeout: 3000 });
        last = (await hover.innerText()).trim();
        return expect.test(last) && last;
      },
      { timeout, interval: 500 },
    );
  }

  /** Clicks the button `label` of the notification whose text contains `text` (string or RegExp). */
  async clickNotificationButton(text, label, { timeout = 10000 } = {}) {
    await this.page
      .locator(".notifications-toasts .notification-toast")
      .filter({ hasText: text })
      .first()
      .locator(".monaco-button", { hasText: label })
      .first()
      .click({ timeout });
  }

  async notificationsText() {
    const toasts = this.page.locator(".notifications-toasts");
    return (await toasts.count()) ? toasts.innerText() : "";
  }

  /**
   * The frame of a webview whose document text matches `needle` (string or RegExp). Webviews are nested
   * iframes (iframe.webview > iframe#active-frame); the content is in the inner one.
   */
  async webviewFrame(needle, { timeout = 30000 } = {}) {
    const match = (t) => (needle instanceof RegExp ? needle.test(t) : t.includes(needle));
    return waitFor(
      `a webview containing ${needle}`,
      async () => {
        for (const frame of this.page.frames()) {
          if (frame === this.page.mainFrame()) continue;
          const t = await frame
            .evaluate(() => (document.body ? document.body.innerText : ""))
            .catch(() => "");
          if (t && match(t)) return frame;
        }
        return null;
      },
      { timeout },
    );
  }

  async webviewText(needle, opts) {
    const frame = await this.webviewFrame(needle, opts);
    return frame.evaluate(() => document.body.innerText);
  }

  /** Opens a workspace file through quick open (path relative to the workspace). */
  async openFile(rel, { timeout = 20000 } = {}) {
    const base = path.basename(rel);
    const deadline = Date.now() + timeout;
    for (;;) {
      try {
        await this._palette(rel);
        const row = this.quickInput()
          .locator(".monaco-list-row")
          .filter({
            has: this.page.locator(".label-name", { hasText: new RegExp(`^\\s*${escapeRe(base)}\\s*$`) }),
          })
          .first();
        await row.waitFor({ state: "visible", timeout: 3000 });
        await row.click({ timeout: 2000 });
        await this.waitForActiveEditor(base, { timeout: 5000 });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`could not open ${rel}: ${err.message.split("\n")[0]}`);
        await sleep(500);
      }
    }
  }

  activeTab() {
    return this.page.locator(".part.editor .tabs-container .tab.active").first();
  }

  async waitForActiveEditor(basename, { timeout = 15000 } = {}) {
    await waitFor(
      `the active editor to be ${basename}`,
      async () => {
        const label = (await this.activeTab().getAttribute("aria-label", { timeout: 1000 })) || "";
        return label.includes(basename);
      },
      { timeout },
    );
  }

  /** "Ln 12, Col 5 (40 selected)" from the status bar's cursor item, parsed; null when absent. */
  async cursor() {
    const item = this.page.locator("#status\\.editor\\.selection");
    if (!(await item.count())) return null;
    const t = await item.innerText();
    const m = t.match(/Ln (\d+), Col (\d+)(?: \((\d+) selected\))?/);
    return m ? { line: +m[1], column: +m[2], selected: m[3] ? +m[3] : 0, text: t } : { text: t };
  }

  /** Moves the cursor of the active editor (1-based) through the palette's ':' mode. */
  async goTo(line, column = 1) {
    await this._palette(`:${line}:${column}`);
    await this.page.keyboard.press("Enter");
    await this.quickInput()
      .waitFor({ state: "hidden", timeout: 5000 })
      .catch(() => {});
    await waitFor(
      `cursor at ${line}:${column}`,
      async () => {
        const c = await this.cursor();
        return c && c.line === line && c.column === column;
      },
      { timeout: 5000 },
    );
  }

  /**
   * Hovers the editor at (line, column) with the mouse and returns the hover widget's text once it
   * matches `expect` (string or RegExp; default: any text).
   */
  async hover(line, column, { expect, timeout = 20000 } = {}) {
    await this.goTo(line, column);
    const hoverWidget = this.page
      .locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents")
      .first();
    const ok = (t) =>
      !expect ? t.trim().length > 0 : expect instanceof RegExp ? expect.test(t) : t.includes(expect);
    let last = "";
    return waitFor(
      () =>
        `a hover at ${line}:${column}${expect ? ` matching ${expect}` : ""} (last: ${JSON.stringify(last)})`,
      async () => {
        const box = await this._cursorBox();
        // Move away and back, so each attempt is a fresh hover request.
        await this.page.mouse.move(box.x + 400, box.y + 300);
        await this.page.mouse.move(box.x + 3, box.y + box.height / 2);
        await hoverWidget.waitFor({ state: "visible", timeout: 3000 });
        last = await hoverWidget.innerText();
        return ok(last) && last;
      },
      { timeout, interval: 500 },
    );
  }

  async _cursorBox() {
    const cursor = this.page
      .locator(
        ".part.editor .editor-instance.active .monaco-editor .cursors-layer .cursor, .part.editor .monaco-editor.focused .cursors-layer .cursor",
      )
      .first();
    const box = await cursor.boundingBox({ timeout: 3000 });
    if (!box) throw new Error("no cursor on screen");
    return box;
  }

  /** Clicks a link in the visible hover by its text. */
  async clickHoverLink(text) {
    const link = this.page.locator(".monaco-hover:not(.hidden) a").filter({ hasText: text }).first();
    await link.waitFor({ state: "visible", timeout: 5000 });
    await link.click();
  }

  /** Types into the active editor at the cursor (the buffer stays unsaved). */
  async type(text) {
    await this.page.keyboard.type(text, { delay: 5 });
  }

  // --- chat (the chat view sits in the auxiliary bar; needs the scripted-model test extension) ---

  /** Sends `query` (e.g. "@smartctx …") in the chat view with the scripted model selected. */
  async askChat(query) {
    // On a loaded machine the palette can swallow the command's own input box (a retried click
    // reopens the palette over it): run the command again rather than fail.
    for (let attempt = 1; ; attempt++) {
      await this.runCommand("E2E: Ask Chat with the Scripted Model");
      try {
        await this.inputBox("Chat query for the scripted model", query, { timeout: 10000 });
        return;
      } catch (err) {
        if (attempt === 3) throw err;
        log(`askChat: no input box (attempt ${attempt}); running the command again`);
        await this.closeQuickInput();
      }
    }
  }

  /** innerText of the visible chat session (requests, responses, buttons). */
  async chatText() {
    const session = this.page.locator(".interactive-session").filter({ visible: true }).first();
    return (await session.count()) ? session.innerText({ timeout: 5000 }) : "";
  }

  /** Waits until the chat text matches `re` (string or RegExp); returns the text. */
  async waitForChat(re, { timeout = 60000 } = {}) {
    const ok = (t) => (re instanceof RegExp ? re.test(t) : t.includes(re));
    let last = "";
    return waitFor(
      () => `the chat to show ${re} (last: ${JSON.stringify(last.slice(-500))})`,
      async () => {
        last = await this.chatText();
        return ok(last) && last;
      },
      { timeout },
    );
  }

  /**
   * "Add Context…" (the + of the chat input): picks the provider's entry (e.g. "SmartCtx context..."),
   * then the item whose label matches `item`; returns the attachment chip's locator.
   */
  async addChatContext(provider, item, { timeout = 20000 } = {}) {
    await this.runCommand("Chat: Focus on Chat View").catch(() => {});
    const button = this.page
      .locator('.part.auxiliarybar [aria-label^="Add Context"]')
      .filter({ visible: true })
      .first();
    await button.click({ timeout });
    const row = (label) =>
      this.quickInput()
        .locator(".monaco-list-row")
        .filter({ visible: true })
        .filter({ hasText: label })
        .first();
    await row(provider).click({ timeout });
    await row(item).click({ timeout });
    const chip = this.page
      .locator(".part.auxiliarybar .chat-attached-context-attachment")
      .filter({ hasText: item })
      .first();
    await chip.waitFor({ state: "visible", timeout });
    return chip;
  }

  /** The hover text of an element (e.g. an attachment chip's tooltip), once it shows one. */
  async hoverText(locator, { timeout = 15000 } = {}) {
    return waitFor(
      "a hover",
      async () => {
        await this.page.mouse.move(0, 0);
        await locator.hover();
        const hover = this.page.locator(".workbench-hover, .monaco-hover").filter({ visible: true }).first();
        await hover.waitFor({ state: "visible", timeout: 3000 });
        return (await hover.innerText()).trim();
      },
      { timeout, interval: 500 },
    );
  }

  /**
   * The references (stream.reference) of the last response, as shown once its "Completed N steps" and
   * "Used N references" toggles are expanded: e.g. ["pricing.py:13-17 app"]. Waits for the response to
   * finish first (toggles re-render while it streams).
   */
  async chatReferences({ timeout = 20000 } = {}) {
    const response = this.page
      .locator(".interactive-session .interactive-response")
      .filter({ visible: true })
      .last();
    await waitFor(
      "the chat response to finish",
      async () => !/chat-response-loading/.test((await response.getAttribute("class")) || ""),
      {
        timeout,
      },
    );
    const rows = response.locator(".chat-used-context-list .monaco-list-row").filter({ visible: true });
    const toggle = (re) =>
      response.locator(".monaco-button-mdlabel").filter({ hasText: re }).filter({ visible: true }).first();
    await waitFor(
      "the response's references",
      async () => {
        if (await rows.count()) return true;
        for (const re of [/^Used \d+ references?/, /^Completed \d+ steps?/]) {
          if (await toggle(re).count()) {
            await toggle(re).click({ timeout: 2000 });
            await sleep(400);
            return (await rows.count()) > 0;
          }
        }
        return false;
      },
      { timeout, interval: 500 },
    );
    return (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  }
}
