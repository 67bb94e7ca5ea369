// Part of bench/extension_perf.mjs: how long the extension host takes to turn a pack into the panel's
// HTML (src/render.ts: renderPanel, highlight.js colouring included), on the very packs the server
// returns for the bench's tasks, here in plain Node (render.ts imports nothing from vscode).
//
//   node client-vscode/bench/render_time.mjs PACKS.json OUT.json
// PACKS.json: [{task, pack}] (wire packs, as server_inprocess.py dumps them). Each pack is rendered
// 3 times; the last (warm) time counts.
import * as esbuild from "esbuild";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [packsFile, outFile] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-render-"));
try {
  const bundle = path.join(tmp, "render.cjs");
  await esbuild.build({
    entryPoints: [path.join(CLIENT_DIR, "src/render.ts")],
    bundle: true,
    outfile: bundle,
    format: "cjs",
    platform: "node",
    target: "node20",
    minify: true,
    logLevel: "warning",
  });
  const { renderPanel } = createRequire(import.meta.url)(bundle);
  const resources = {
    nonce: "bench",
    cspSource: "vscode-webview:",
    scriptUri: "panel.js",
    styleUri: "panel.css",
  };
  const rows = JSON.parse(fs.readFileSync(packsFile, "utf8")).map(({ task, pack }) => {
    let ms = 0;
    let html = "";
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      html = renderPanel({ title: `SmartCtx: ${task}`, pack }, resources);
      ms = performance.now() - t0;
    }
    return { task, ms, htmlBytes: Buffer.byteLength(html), elements: (html.match(/<[a-z]/g) || []).length };
  });
  fs.writeFileSync(outFile, JSON.stringify(rows, null, 2));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
