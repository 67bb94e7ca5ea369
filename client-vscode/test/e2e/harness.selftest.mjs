// Proves the harness itself, independent of the real extension: writes a small placeholder extension
// (a palette command with an input box and a webview panel whose citations open files, a hover with a
// command link, a status bar item, a chat participant, an LM tool) into a temp folder outside the repo,
// packages it with the two test-only extensions, and drives all of it through code-server.
//   node client-vscode/test/e2e/harness.selftest.mjs      (after scripts/toolchain.sh; on Node 24)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Session, exitAfterTeardown, guardProcess, log, waitFor } from "./harness.mjs";
import { makeFixture, defRange, wordPosition } from "./fixture.mjs";
import { packageExtension, packageTestExtensions } from "./vsix.mjs";
import { step } from "./run.mjs";

export const PLACEHOLDER_PACKAGE = {
  name: "placeholder",
  publisher: "smartctx-e2e",
  version: "0.0.1",
  private: true,
  license: "MIT",
  displayName: "Harness placeholder",
  engines: { vscode: "^1.104.0" },
  main: "./extension.js",
  activationEvents: ["onStartupFinished"],
  contributes: {
    commands: [
      { command: "placeholder.openPanel", title: "Open Panel", category: "Placeholder" },
      { command: "placeholder.contextForSymbol", title: "Context for Symbol", category: "Placeholder" },
    ],
    chatParticipants: [
      {
        id: "smartctx-e2e.placeholder",
        name: "placeholder",
        fullName: "Placeholder",
        description: "Harness placeholder participant",
      },
    ],
    languageModelTools: [
      {
        name: "placeholder",
        displayName: "Placeholder pack",
        toolReferenceName: "placeholder",
        canBeReferencedInPrompt: true,
        modelDescription: "Returns a fake context pack.",
        inputSchema: { type: "object", properties: { task: { type: "string" } }, required: ["task"] },
      },
    ],
  },
};

export const PLACEHOLDER_JS = String.raw`'use strict';
const vscode = require('vscode');
const CITE = { path: 'app/pricing.py', start: 13, end: 17 };
const citeText = CITE.path + ':' + CITE.start + '-' + CITE.end;
function fileUri() { return vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, CITE.path); }
function openPanel(title) {
  const panel = vscode.window.createWebviewPanel('placeholder', 'Placeholder: ' + title, vscode.ViewColumn.Beside, { enableScripts: true });
  panel.webview.html = '<!DOCTYPE html><html><body><h1>Placeholder: ' + title.replace(/</g, '&lt;') + '</h1>' +
    '<p>compute_total <a class="citation" href="#" data-path="' + CITE.path + '">' + citeText + '</a></p>' +
    '<script>const vscode = acquireVsCodeApi(); document.querySelectorAll("a.citation").forEach(a => a.addEventListener("click", e => { e.preventDefault(); vscode.postMessage({ open: a.textContent }); }));</script></body></html>';
  panel.webview.onDidReceiveMessage(async () => {
    const doc = await vscode.workspace.openTextDocument(fileUri());
    const end = doc.lineAt(CITE.end - 1).range.end;
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(CITE.start - 1, 0, end.line, end.character) });
  });
}
exports.activate = (context) => {
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  item.text = '$(check) Placeholder ready'; item.show(); context.subscriptions.push(item);
  context.subscriptions.push(
    vscode.commands.registerCommand('placeholder.openPanel', async () => {
      const task = await vscode.window.showInputBox({ title: 'Placeholder', prompt: 'Placeholder task' });
      if (task) openPanel(task);
    }),
    vscode.commands.registerCommand('placeholder.contextForSymbol', (name) => openPanel('symbol ' + name)),
    vscode.languages.registerHoverProvider({ language: 'python' }, {
      provideHover(doc, pos) {
        const range = doc.getWordRangeAtPosition(pos);
        if (!range) return;
        const word = doc.getText(range);
        const md = new vscode.MarkdownString('**' + word + '** (placeholder hover)\n\n[Open context for ' + '\x60' + word + '\x60](command:placeholder.contextForSymbol?' + encodeURIComponent(JSON.stringify([word])) + ')');
        md.isTrusted = { enabledCommands: ['placeholder.contextForSymbol'] };
        return new vscode.Hover(md, range);
      },
    }),
    vscode.chat.createChatParticipant('smartctx-e2e.placeholder', async (request, chatContext, stream, token) => {
      stream.progress('Fetching the pack…');
      stream.reference(new vscode.Location(fileUri(), new vscode.Range(CITE.start - 1, 0, CITE.end - 1, 0)));
      stream.markdown('Pack: ' + citeText + '\n\n');
      if (request.model) {
        const msgs = [vscode.LanguageModelChatMessage.User('Context:\n' + citeText + ' compute_total\n\nQuestion: ' + request.prompt)];
        const res = await request.model.sendRequest(msgs, {}, token);
        for await (const part of res.text) stream.markdown(part);
      }
      return {};
    }),
    vscode.lm.registerTool('placeholder', {
      async invoke(options) { return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart('Pack for ' + options.input.task + ': ' + citeText)]); },
    })
  );
};
`;

export async function main() {
  const began = Date.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "smartctx-e2e-selftest-"));
  guardProcess({ cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }) });
  const extDir = path.join(tmp, "placeholder");
  fs.mkdirSync(extDir);
  fs.writeFileSync(path.join(extDir, "package.json"), JSON.stringify(PLACEHOLDER_PACKAGE, null, 2));
  fs.writeFileSync(path.join(extDir, "extension.js"), PLACEHOLDER_JS);
  const [placeholder, testExts] = await Promise.all([
    packageExtension(extDir, path.join(tmp, "vsix")),
    packageTestExtensions(path.join(tmp, "vsix")),
  ]);
  log(`packaged 3 extensions (${Date.now() - began} ms)`);
  const { dir: workspace } = makeFixture(path.join(tmp, "workspace"));
  const results = path.join(tmp, "selftest.json");

  const s = await Session.start({
    name: "harness-selftest",
    workspace,
    vsix: [placeholder, ...testExts],
    proposedApi: ["smartctx-e2e.placeholder"],
    settings: {
      "smartctxE2e.selfTest.resultsFile": results,
      "smartctxE2e.selfTest.extensionId": "smartctx-e2e.placeholder",
      "smartctxE2e.selfTest.toolName": "placeholder",
    },
  });
  const wb = s.wb;
  const cite = defRange("app/pricing.py", "def compute_total");
  try {
    await step(s, "selftest-01-workbench", async () => {
      await wb.waitForStatusBar(/Placeholder ready/, { timeout: 30000 });
    });
    await step(s, "selftest-02-palette-panel", async () => {
      await wb.runCommand("Placeholder: Open Panel");
      await wb.inputBox("Placeholder task", "compute totals");
      const text = await wb.webviewText("Placeholder: compute totals");
      if (!text.includes(`${cite.file}:${cite.start}-${cite.end}`))
        throw new Error(`panel lacks the citation: ${text}`);
    });
    await step(s, "selftest-03-citation-opens-file", async () => {
      const frame = await wb.webviewFrame("Placeholder: compute totals");
      await frame.locator("a.citation").first().click();
      await wb.waitForActiveEditor("pricing.py");
      const c = await waitFor(
        "the cited range selected",
        async () => {
          const cur = await wb.cursor();
          return cur && cur.selected > 0 && cur;
        },
        { timeout: 10000 },
      );
      if (c.line !== cite.end)
        throw new Error(`cursor at ${c.text}, expected the selection to end on line ${cite.end}`);
    });
    await step(s, "selftest-04-hover", async () => {
      await wb.openFile("app/service.py");
      const pos = wordPosition("app/service.py", "compute_total(items", "compute_total");
      const text = await wb.hover(pos.line, pos.column + 2, { expect: "placeholder hover" });
      if (!text.includes("Open context for compute_total")) throw new Error(`hover: ${text}`);
    });
    await step(s, "selftest-05-hover-link-opens-panel", async () => {
      await wb.clickHoverLink("Open context for");
      await wb.webviewText("Placeholder: symbol compute_total");
    });
    await step(s, "selftest-06-chat-scripted-model", async () => {
      await wb.askChat("@placeholder what calls compute_total?");
      await wb.waitForChat(/Scripted answer\. Context had 1 citations: app\/pricing\.py:13-17/, {
        timeout: 30000,
      });
      const refs = await wb.chatReferences();
      if (!refs.some((r) => r.startsWith("pricing.py:13-17"))) throw new Error(`chat references: ${refs}`);
    });
    await step(s, "selftest-07-self-test", async () => {
      const r = await waitFor(
        "self-test results",
        () => fs.existsSync(results) && JSON.parse(fs.readFileSync(results, "utf8")),
        { timeout: 30000 },
      );
      const bad = r.checks.filter((c) => !c.ok);
      if (bad.length) throw new Error(`self-test failed: ${JSON.stringify(bad)}`);
      log(`self-test: ${r.checks.map((c) => `${c.name}: ${c.detail}`).join(" | ")}`);
    });
    log(`timings: ${JSON.stringify(s.timings)}; memory peak ${s.memoryReport()}`);
    await s.close();
  } catch (err) {
    await s.close({ error: err });
    throw err;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  log(`harness self-test passed in ${((Date.now() - began) / 1000).toFixed(1)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    if (!/^step |deadline|interrupted/.test(err.message)) console.error(err.stack || err);
    void exitAfterTeardown(1, err.message);
  });
}
