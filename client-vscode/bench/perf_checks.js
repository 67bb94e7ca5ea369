// In-host half of bench/extension_perf.mjs: copied as `checks.js` into a copy of the e2e self-test
// extension (test/e2e/extensions/self-test), which runs these after its own checks (extension
// installed, activated, lm.invokeTool returned a pack: so the index is ready when these start).
//
// Reads the plan from $SMARTCTX_BENCH_PLAN (written by extension_perf.mjs): tasks, hover positions,
// chat prompts, and `out`, the JSON file these timings go to. Every timed call records its wall
// clock start/end (Date.now(), the clock of the SmartCtx log's timestamps, so the runner can pair each
// call with the log lines it caused) and its duration by performance.now().
"use strict";
const fs = require("fs");
const path = require("path");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function hoverText(hovers) {
  return (hovers || [])
    .flatMap((h) => h.contents || [])
    .map((c) => (typeof c === "string" ? c : c.value || ""))
    .join("\n");
}

module.exports = (vscode) => {
  const planFile = process.env.SMARTCTX_BENCH_PLAN;
  if (!planFile) return [];
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
  const results = { vscodeVersion: vscode.version, panel: [], hover: [], chat: [] };
  const save = () => {
    fs.mkdirSync(path.dirname(plan.out), { recursive: true });
    fs.writeFileSync(plan.out + ".tmp", JSON.stringify(results, null, 2));
    fs.renameSync(plan.out + ".tmp", plan.out);
  };
  const timed = async (fn) => {
    const startedAt = Date.now();
    const t0 = performance.now();
    let error;
    let value;
    try {
      value = await fn();
    } catch (err) {
      error = String(err && err.message ? err.message : err);
    }
    return { startedAt, endedAt: Date.now(), ms: performance.now() - t0, value, error };
  };
  const root = vscode.workspace.workspaceFolders[0].uri;

  return [
    {
      name: "bench: settle after the first pack",
      run: async () => {
        // The first pack proved the index readable; graph scores are computed just after it.
        await sleep(plan.settleMs || 3000);
        return `slept ${plan.settleMs || 3000} ms`;
      },
    },
    {
      name: "bench: palette command -> panel rendered",
      run: async () => {
        const run = async (task, warmup) => {
          const r = await timed(() => vscode.commands.executeCommand("smartctx.contextForTask", task));
          delete r.value;
          results.panel.push({ task, warmup, ...r });
          save();
          await sleep(plan.gapMs || 250);
        };
        for (const task of plan.warmupTasks) await run(task, true);
        for (const task of plan.tasks) await run(task, false);
        const timedRuns = results.panel.filter((r) => !r.warmup);
        const failed = timedRuns.filter((r) => r.error);
        if (failed.length) throw new Error(`${failed.length} failed: ${failed[0].error}`);
        return `${timedRuns.length} tasks`;
      },
    },
    {
      name: "bench: hover round-trip",
      run: async () => {
        const uriOf = (file) => vscode.Uri.joinPath(root, file);
        // Open every document first (didOpen reaches the server, which indexes the buffer once
        // typing pauses), then let that settle, so only the hover itself is timed.
        for (const file of new Set(plan.hovers.map((h) => h.file)))
          await vscode.workspace.openTextDocument(uriOf(file));
        await sleep(plan.settleMs || 3000);
        const run = async (h, warmup) => {
          const r = await timed(() =>
            vscode.commands.executeCommand(
              "vscode.executeHoverProvider",
              uriOf(h.file),
              new vscode.Position(h.line, h.character),
            ),
          );
          const text = hoverText(r.value);
          delete r.value;
          results.hover.push({ ...h, warmup, ...r, chars: text.length, head: text.slice(0, 120) });
          save();
        };
        for (const h of plan.warmupHovers) await run(h, true);
        for (const h of plan.hovers) await run(h, false);
        const timedRuns = results.hover.filter((r) => !r.warmup);
        const empty = timedRuns.filter((r) => r.error || !r.chars);
        if (empty.length)
          throw new Error(
            `${empty.length} hovers empty or failed: ${empty.map((e) => `${e.file}:${e.line + 1} ${e.word} ${e.error || ""}`).join("; ")}`,
          );
        return `${timedRuns.length} hovers`;
      },
    },
    {
      name: "bench: @smartctx first reference",
      run: async () => {
        const run = async (prompt, warmup) => {
          await vscode.commands.executeCommand("workbench.action.chat.newChat").then(
            () => undefined,
            () => undefined,
          );
          await sleep(300);
          const r = await timed(() =>
            vscode.commands.executeCommand("workbench.action.chat.open", {
              query: `@smartctx ${prompt}`,
              modelSelector: { vendor: "smartctx-e2e", id: "scripted" },
              blockOnResponse: true,
            }),
          );
          // The chat result: VS Code's own timings (firstProgress, totalElapsed) and our metadata.
          r.timings = r.value && r.value.timings;
          r.metadata = r.value && r.value.metadata;
          delete r.value;
          results.chat.push({ prompt, warmup, ...r });
          save();
          await sleep(plan.gapMs || 250);
        };
        for (const p of plan.warmupChat) await run(p, true);
        for (const p of plan.chat) await run(p, false);
        const failed = results.chat.filter((r) => r.error);
        if (failed.length) throw new Error(`${failed.length} failed: ${failed[0].error}`);
        return `${results.chat.filter((r) => !r.warmup).length} requests`;
      },
    },
  ];
};
