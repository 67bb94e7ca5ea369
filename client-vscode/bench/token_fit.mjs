// Packs sized in a chat model's tokens (src/token_fit.ts), measured: for each scripted model of the
// e2e (test/e2e/extensions/scripted-model/models.json: one token per 1.6, 2.5 and 5 characters), a
// fresh calibration and the same tasks in turn, each pack asked for at the budget of
// smartctx.budgetTokens, from the real language server over LSP. Per pack: how many asks, its size
// as the model counts it against the budget, its size in o200k_base tokens against the scaled budget
// the server packed in, the scale asked at, and whether it had to be cut; beside it, as a baseline,
// how the model counts the unsized pack (the same budget in o200k_base tokens, as before issue #24).
//
//   node client-vscode/bench/token_fit.mjs [--budget 8000] [--out FILE]
//
// Workspace: a copy of this repository's server/ tree at HEAD (git archive; ~70 Python files), so the
// packs are real answers that fill real budgets. The server is `<repo>/.venv/bin/python -m smartctx
// serve` (E2E_PYTHON overrides, as in the e2e). Prints one table per model and a summary; writes JSON
// to client-vscode/bench/out/token_fit.json. The budget is never exceeded: a pack over it fails the run.
import { execFileSync } from "node:child_process";
import * as esbuild from "esbuild";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO_DIR = path.resolve(CLIENT_DIR, "..");
const PYTHON = process.env.E2E_PYTHON || path.join(REPO_DIR, ".venv/bin/python");
const MODELS = JSON.parse(
  fs.readFileSync(path.join(CLIENT_DIR, "test/e2e/extensions/scripted-model/models.json"), "utf8"),
).models;

// Realistic tasks about the workspace (this repository's server), in the order they are asked.
const TASKS = [
  "how is the token budget enforced when packing bodies and summaries",
  "how does the language server answer a hover over a name",
  "where are unsaved editor buffers indexed instead of the file on disk",
  "cancelling a contextForTask request should stop the pipeline at the next stage",
  "add a setting to exclude folders from indexing with glob patterns",
  "why does a branch switch re-index thousands of files in one reconcile",
  "how are secrets redacted from packed code",
  "the MCP server drops a request whose line cannot be read",
];

function parseArgs(argv) {
  const args = { budget: 8000, out: path.join(CLIENT_DIR, "bench/out/token_fit.json") };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--budget") args.budget = Number(argv[++i]);
    else if (argv[i] === "--out") args.out = path.resolve(argv[++i]);
    else throw new Error(`usage: token_fit.mjs [--budget N] [--out FILE]; unknown ${argv[i]}`);
  }
  if (!Number.isInteger(args.budget) || args.budget < 1) throw new Error("--budget must be a whole number");
  return args;
}

// src/token_fit.ts and the test's language server client, bundled for plain Node.
async function load(tmp) {
  const entry = path.join(tmp, "entry.ts");
  fs.writeFileSync(
    entry,
    `export * from ${JSON.stringify(path.join(CLIENT_DIR, "src/token_fit.ts"))};\n` +
      `export { startLanguageServer } from ${JSON.stringify(path.join(CLIENT_DIR, "test/unit/language_server.ts"))};\n`,
  );
  const bundle = path.join(tmp, "token_fit.cjs");
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    outfile: bundle,
    format: "cjs",
    platform: "node",
    target: "node20",
    logLevel: "warning",
    nodePaths: [path.join(CLIENT_DIR, "node_modules")],
  });
  return createRequire(import.meta.url)(bundle);
}

const percent = (part, whole) => `${((100 * part) / whole).toFixed(1)}%`;

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-token-fit-"));
  try {
    const fit = await load(tmp);
    const root = path.join(tmp, "server");
    fs.mkdirSync(root);
    execFileSync("sh", ["-c", `git -C "${REPO_DIR}" archive HEAD:server | tar -x -C "${root}"`]);
    const commit = execFileSync("git", ["-C", REPO_DIR, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
    }).trim();
    const started = performance.now();
    const server = await fit.startLanguageServer(root, PYTHON);
    console.log(
      `indexed a copy of server/ at ${commit} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const results = [];
    try {
      const unsized = [];
      for (const task of TASKS) {
        unsized.push((await server.contextForTask({ task, options: { budgetTokens: args.budget } })).text);
      }
      for (const model of MODELS) {
        const count = (text) => Promise.resolve(Math.ceil(text.length / model.charsPerToken));
        const store = new Map();
        const calibration = new fit.Calibration({
          get: (key) => store.get(key),
          update: (key, value) => Promise.resolve(void store.set(key, structuredClone(value))),
        });
        const counter = { name: model.id, key: `model:${model.id}`, count };
        for (const [index, task] of TASKS.entries()) {
          const sized = await fit.fitPack(
            (options) => server.contextForTask({ task, options }),
            args.budget,
            counter,
            calibration,
          );
          if (sized.count.tokens > args.budget)
            throw new Error(
              `${model.id}, task ${index + 1}: ${sized.count.tokens} tokens over ${args.budget}`,
            );
          results.push({
            model: model.id,
            charsPerToken: model.charsPerToken,
            task,
            asks: sized.count.asks,
            cut: sized.count.cut,
            modelTokens: sized.count.tokens,
            budgetTokens: args.budget,
            o200kTokens: sized.pack.tokensUsed,
            o200kBudget: sized.pack.budgetTokens,
            tokenScale: sized.pack.metadata.tokenScale,
            trimmed: sized.pack.trimmed,
            unsizedModelTokens: await count(unsized[index]),
          });
        }
      }
    } finally {
      await server.close();
    }
    for (const model of MODELS) {
      const rows = results.filter((row) => row.model === model.id);
      console.log(`\n${model.id}: one token per ${model.charsPerToken} characters, budget ${args.budget}`);
      console.log("task  asks  model tokens  fill    o200k used / budget  scale   cut  unsized");
      rows.forEach((row, index) => {
        console.log(
          `${String(index + 1).padStart(4)}  ${String(row.asks).padStart(4)}  ${String(row.modelTokens).padStart(12)}  ` +
            `${percent(row.modelTokens, row.budgetTokens).padStart(6)}  ${`${row.o200kTokens} / ${row.o200kBudget}`.padStart(19)}  ` +
            `${row.tokenScale.toFixed(3)}  ${row.cut ? "yes" : "no "}  ${String(row.unsizedModelTokens).padStart(7)}`,
        );
      });
      const fills = rows.map((row) => row.modelTokens / row.budgetTokens);
      console.log(
        `      fill min ${percent(Math.min(...fills), 1)}, median ${percent(fills.sort((a, b) => a - b)[Math.floor(fills.length / 2)], 1)}, ` +
          `max ${percent(Math.max(...fills), 1)}; second asks ${rows.filter((row) => row.asks > 1).length} of ${rows.length}; ` +
          `cut ${rows.filter((row) => row.cut).length}; over 0`,
      );
    }
    fs.mkdirSync(path.dirname(args.out), { recursive: true });
    fs.writeFileSync(args.out, JSON.stringify({ commit, budget: args.budget, results }, null, 2));
    console.log(`\nJSON: ${args.out}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`token_fit: ${error.message}`);
  process.exit(1);
});
