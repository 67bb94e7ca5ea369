// Test only: in-host API checks, run on activation (when a results file is configured) and by the
// command "E2E: Run In-Host Self-Test". Writes {startedAt, finishedAt, vscodeVersion, ok, checks:
// [{name, ok, detail, ms}]} atomically to the results file. Extra checks: add them to CHECKS below,
// or put a `checks.js` next to this file exporting `(vscode, ctx) => [{name, run}]`.
"use strict";
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

const CITATION = /[A-Za-z0-9_.\-/]+\.[A-Za-z0-9]+:\d+-\d+/;

function settings() {
  const c = vscode.workspace.getConfiguration("smartctxE2e.selfTest");
  return {
    resultsFile: c.get("resultsFile") || process.env.SMARTCTX_E2E_SELFTEST_RESULTS || "",
    extensionId: c.get("extensionId"),
    toolName: c.get("toolName"),
    task: c.get("task"),
    timeoutMs: c.get("timeoutMs"),
    toolTokenBudget: c.get("toolTokenBudget"),
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Retries `fn` until it returns without throwing or the deadline passes (the index may still be building).
async function retry(deadline, fn) {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(1000);
    }
  }
}

function resultText(result) {
  return (result?.content || [])
    .map((p) =>
      p instanceof vscode.LanguageModelTextPart ? p.value : typeof p?.value === "string" ? p.value : "",
    )
    .join("");
}

const CHECKS = [
  {
    name: "extension is installed",
    required: true,
    run: async (ctx) => {
      ctx.ext = vscode.extensions.getExtension(ctx.s.extensionId);
      if (!ctx.ext) throw new Error(`${ctx.s.extensionId} not found`);
      return `${ctx.ext.id} ${ctx.ext.packageJSON.version}`;
    },
  },
  {
    name: "extension activates",
    required: true,
    run: async (ctx) => {
      ctx.api = await ctx.ext.activate();
      return `active=${ctx.ext.isActive}, exports: ${Object.keys(ctx.api || {}).join(",") || "none"}`;
    },
  },
  {
    name: "LM tool is registered",
    run: async (ctx) => {
      const names = vscode.lm.tools.map((t) => t.name);
      await retry(Date.now() + 10000, async () => {
        if (!vscode.lm.tools.some((t) => t.name === ctx.s.toolName))
          throw new Error(`no tool ${ctx.s.toolName} in [${names.join(", ")}]`);
      });
      const tool = vscode.lm.tools.find((t) => t.name === ctx.s.toolName);
      return `${tool.name}: tags=${JSON.stringify(tool.tags)} schema=${JSON.stringify(tool.inputSchema)}`;
    },
  },
  {
    name: "lm.invokeTool returns a pack with a citation",
    run: async (ctx) => {
      const deadline = ctx.started + ctx.s.timeoutMs;
      const text = await retry(deadline, async () => {
        const tokenSource = new vscode.CancellationTokenSource();
        const result = await vscode.lm.invokeTool(
          ctx.s.toolName,
          { input: { task: ctx.s.task }, toolInvocationToken: undefined },
          tokenSource.token,
        );
        const t = resultText(result);
        if (!CITATION.test(t)) throw new Error(`no path:start-end citation in: ${t.slice(0, 400)}`);
        return t;
      });
      return `${text.match(CITATION)[0]} (${text.length} chars)`;
    },
  },
  {
    // As Copilot's agent calls the tool: with the chat model's tokenBudget and countTokens. Each
    // scripted model counts otherwise (one token per so many characters); each is asked twice, the
    // first time with nothing calibrated for it. The detail is one JSON line the scenario reads.
    name: "lm.invokeTool fits each scripted model's tokenBudget as its countTokens counts",
    run: async (ctx) => {
      const models = await vscode.lm.selectChatModels({ vendor: "smartctx-e2e" });
      if (models.length < 3)
        throw new Error(`expected three scripted models, got ${models.map((m) => m.id)}`);
      const budget = ctx.s.toolTokenBudget;
      const rows = [];
      for (const model of models) {
        for (const call of [1, 2]) {
          const tokenSource = new vscode.CancellationTokenSource();
          const result = await vscode.lm.invokeTool(
            ctx.s.toolName,
            {
              input: { task: ctx.s.task },
              toolInvocationToken: undefined,
              tokenizationOptions: {
                tokenBudget: budget,
                countTokens: (text, token) => model.countTokens(text, token),
              },
            },
            tokenSource.token,
          );
          const text = resultText(result);
          const tokens = await model.countTokens(text);
          if (tokens > budget) throw new Error(`${model.id}: ${tokens} tokens over the budget of ${budget}`);
          if (!CITATION.test(text)) throw new Error(`${model.id}: no citation in ${text.slice(0, 400)}`);
          rows.push({ model: model.id, call, tokens, budget, chars: text.length });
        }
      }
      return JSON.stringify(rows);
    },
  },
];

function extraChecks(ctx) {
  const file = path.join(__dirname, "checks.js");
  return fs.existsSync(file) ? require(file)(vscode, ctx) : [];
}

async function runAll(output) {
  const s = settings();
  const ctx = { s, started: Date.now(), output };
  const report = { startedAt: new Date().toISOString(), vscodeVersion: vscode.version, checks: [] };
  let skipRest = false;
  for (const check of [...CHECKS, ...extraChecks(ctx)]) {
    const t0 = Date.now();
    if (skipRest) {
      report.checks.push({ name: check.name, ok: false, detail: "skipped: an earlier check failed", ms: 0 });
      continue;
    }
    try {
      const detail = await check.run(ctx);
      report.checks.push({ name: check.name, ok: true, detail: String(detail ?? ""), ms: Date.now() - t0 });
    } catch (err) {
      report.checks.push({
        name: check.name,
        ok: false,
        detail: String(err?.stack || err),
        ms: Date.now() - t0,
      });
      skipRest = !!check.required; // nothing more to test without the extension
    }
    output.appendLine(JSON.stringify(report.checks.at(-1)));
  }
  report.finishedAt = new Date().toISOString();
  report.ok = report.checks.every((c) => c.ok);
  if (s.resultsFile) {
    fs.mkdirSync(path.dirname(s.resultsFile), { recursive: true });
    fs.writeFileSync(s.resultsFile + ".tmp", JSON.stringify(report, null, 2));
    fs.renameSync(s.resultsFile + ".tmp", s.resultsFile);
  }
  return report;
}

function activate(context) {
  const output = vscode.window.createOutputChannel("SmartCtx e2e self-test");
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand("smartctxE2e.runSelfTest", () => runAll(output)),
  );
  if (settings().resultsFile) {
    runAll(output).catch((err) => output.appendLine(`self-test crashed: ${err?.stack || err}`));
  }
}

module.exports = { activate, deactivate() {} };
