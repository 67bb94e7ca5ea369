// The SmartCtx extension end to end in a real VS Code (code-server), proven by what the screen shows.
// Run: client-vscode/test/e2e/run.sh client-vscode/smartctx.vsix   (see README in this folder)
// Each step saves screenshots/<step>.png; a failure keeps screenshots and logs under out/.
import fs from "node:fs";
import path from "node:path";
import { defRange, FILES, wordPosition } from "./fixture.mjs";
import { E2E_DIR } from "./harness.mjs";

const TASK = "how does compute_total apply the discount and tax";

// The scripted models and how each counts tokens (extensions/scripted-model/models.json).
const MODELS = JSON.parse(
  fs.readFileSync(path.join(E2E_DIR, "extensions/scripted-model/models.json"), "utf8"),
).models;
const SCRIPTED = MODELS.find((model) => model.id === "scripted");
const tokensOf = (model, text) => Math.ceil(text.length / model.charsPerToken);
// @smartctx's pack takes at most this share of the model's input window (PACK_SHARE_OF_INPUT in
// src/token_fit.ts), within smartctx.budgetTokens (8000 here).
const PACK_SHARE_OF_INPUT = 0.5;
const number = (text) => Number(text.replace(/,/g, ""));

export const options = {
  name: "smartctx",
  proposedApi: ["smartctx.smartctx"],
  settings: {
    "smartctxE2e.selfTest.task": TASK,
    "smartctx.server.logLevel": "info",
  },
  timeoutMs: 240000,
};

const cite = (r) => `${r.file}:${r.start}-${r.end}`;

export default async function scenario({ s, wb, step, selfTest, waitFor, log, modelLog, workspace }) {
  const computeTotal = defRange("app/pricing.py", "def compute_total");
  const placeOrder = defRange("app/service.py", "def place_order");
  const refundOrder = defRange("app/refunds.py", "def refund_order");

  await step("01-status-indexing-then-ready", async () => {
    const ready = await wb.waitForStatusBar(/SmartCtx: \d+ files/, { timeout: 60000 });
    const history = await wb.statusBarHistory(/SmartCtx/);
    log(`status bar: ${history.join(" → ")}`);
    const firstReady = history.findIndex((t) => /SmartCtx: \d+ files/.test(t));
    if (firstReady < 1) throw new Error(`no starting/indexing state before ready: ${history.join(" → ")}`);
    if (!/SmartCtx: \d+ files/.test(ready)) throw new Error(`status bar: ${ready}`);
    if (fs.existsSync(path.join(workspace, "IMPORTED-THE-WORKSPACE-SMARTCTX")))
      throw new Error("the server imported the workspace's smartctx/ package instead of the installed one");
  });

  await step("02-palette-context-for-task", async () => {
    await wb.runCommand("SmartCtx: Context for Task…");
    await wb.inputBox("Describe the task", TASK);
    const text = await wb.webviewText(cite(computeTotal), { timeout: 30000 });
    for (const want of ["compute_total", cite(computeTotal), "files indexed"]) {
      if (!text.includes(want)) throw new Error(`panel lacks ${want}: ${text.slice(0, 1500)}`);
    }
    await waitFor("the panel's tab titled SmartCtx: …", () =>
      wb.page.locator(".tab", { hasText: "SmartCtx: how does compute_total" }).first().isVisible(),
    );
  });

  await step("02b-attach-to-chat-attaches-the-bodies", async () => {
    const frame = await wb.webviewFrame(cite(computeTotal));
    await frame.locator('button[data-action="attach"]').click();
    const chips = wb.page.locator(".part.auxiliarybar .chat-attached-context-attachment");
    const labels = await waitFor("the packed bodies attached to the chat input", async () => {
      const texts = await chips.allInnerTexts();
      return texts.some((t) => t.includes("pricing.py")) && texts;
    });
    log(`attached: ${labels.join(" | ")}`);
    const input = wb.page.locator(".part.auxiliarybar .interactive-input-editor");
    await waitFor("the task typed into the chat input", async () =>
      (await input.innerText()).includes("compute_total"),
    );
  });

  await step("03-citation-opens-file-at-range", async () => {
    const frame = await wb.webviewFrame(cite(computeTotal));
    await frame
      .locator("a.citation", { hasText: cite(computeTotal) })
      .first()
      .click();
    await wb.waitForActiveEditor("pricing.py");
    const c = await waitFor("the cited lines selected", async () => {
      const cur = await wb.cursor();
      return cur && cur.selected > 0 && cur;
    });
    if (c.line !== computeTotal.end)
      throw new Error(`cursor ${c.text}; expected the selection to end on line ${computeTotal.end}`);
  });

  await step("04-hover-shows-server-markdown", async () => {
    await wb.openFile("app/service.py");
    const pos = wordPosition("app/service.py", "compute_total(items", "compute_total");
    const text = await wb.hover(pos.line, pos.column + 3, { expect: /Open context for/, timeout: 30000 });
    if (!text.includes("compute_total")) throw new Error(`hover: ${text}`);
  });

  await step("05-hover-link-opens-symbol-context", async () => {
    await wb.clickHoverLink("Open context for");
    const text = await wb.webviewText(/SmartCtx: \S*compute_total/, { timeout: 30000 });
    if (!text.includes(cite(computeTotal)))
      throw new Error(`symbol panel lacks ${cite(computeTotal)}: ${text.slice(0, 1500)}`);
  });

  await step("06-context-for-symbol-at-cursor", async () => {
    await wb.openFile("app/service.py");
    const pos = wordPosition("app/service.py", "def place_order", "place_order");
    await wb.goTo(pos.line, pos.column + 2);
    await wb.runCommand("SmartCtx: Context for Symbol at Cursor");
    const text = await wb.webviewText("SmartCtx: place_order", { timeout: 30000 });
    if (!text.includes(cite(placeOrder)))
      throw new Error(`panel lacks ${cite(placeOrder)}: ${text.slice(0, 1500)}`);
  });

  await step("07-chat-participant-with-scripted-model", async () => {
    await wb.askChat(`@smartctx ${TASK}`);
    const text = await wb.waitForChat(/Scripted answer\. Context had [1-9]\d* citations: /, {
      timeout: 60000,
    });
    if (!/Context — \d+ definitions in full/.test(text))
      throw new Error(`no pack summary in the chat: ${text}`);
    const refs = await wb.chatReferences();
    log(`chat references: ${refs.join("; ")}`);
    if (!refs.some((r) => r.startsWith(`pricing.py:${computeTotal.start}-${computeTotal.end}`))) {
      throw new Error(
        `chat references lack pricing.py:${computeTotal.start}-${computeTotal.end}: ${refs.join("; ")}`,
      );
    }
    const asked = fs.readFileSync(modelLog, "utf8").trim().split("\n").map(JSON.parse).at(-1);
    if (!asked.messages.some((m) => m.text.includes(cite(computeTotal))))
      throw new Error("the model was not sent the pack");
    // The pack is sized in the scripted model's tokens: the reply names the model, its count and
    // the budget (a share of its small input window), and the pack the model was sent is that count.
    const shown = /by signature · ([\d,]+) \/ ([\d,]+) tokens, counted by scripted\b/.exec(text);
    if (!shown) throw new Error(`the reply does not say the scripted model counted the pack: ${text}`);
    const [tokens, budget] = [number(shown[1]), number(shown[2])];
    const first = asked.messages[0].text;
    const packText = first.slice(first.indexOf("# Context for:"));
    const expected = Math.min(8000, Math.floor(SCRIPTED.maxInputTokens * PACK_SHARE_OF_INPUT));
    log(`@smartctx pack: ${tokens} / ${budget} scripted tokens, ${packText.length} characters`);
    if (budget !== expected) throw new Error(`budget ${budget}, expected ${expected}`);
    if (tokensOf(SCRIPTED, packText) !== tokens || tokens > budget)
      throw new Error(
        `the model was sent ${tokensOf(SCRIPTED, packText)} tokens; the reply says ${tokens} / ${budget}`,
      );
  });

  await step("07b-chat-slash-impact-lists-dependents", async () => {
    await wb.askChat("@smartctx /impact compute_total");
    // The chat renders each dependent as an anchor named by its file and lines.
    const text = await wb.waitForChat(/What depends on app\/pricing\.py::compute_total — \d+ found/, {
      timeout: 60000,
    });
    const caller = `callers\n\nservice.py:${placeOrder.start}-${placeOrder.end}`;
    if (!text.includes(caller))
      throw new Error(`the impact list lacks the caller OrderService.place_order: ${text.slice(-1500)}`);
  });

  await step("07c-panel-counts-with-the-chat-model", async () => {
    // @smartctx answered with the scripted model: the panel's packs are counted by it from now on.
    await wb.runCommand("SmartCtx: Context for Task…");
    await wb.inputBox("Describe the task", TASK);
    const text = await wb.webviewText("counted by scripted", { timeout: 30000 });
    const shown = /([\d,]+) \/ 8,000 tokens, counted by scripted/.exec(text);
    if (!shown || number(shown[1]) > 8000) throw new Error(`panel header: ${text.slice(0, 600)}`);
    log(`panel header: ${shown[0]}`);
  });

  await step("08-lm-tool-invoked-in-host", async () => {
    const report = await selfTest();
    for (const c of report.checks)
      log(`self-test ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail.split("\n")[0]}`);
    if (!report.ok)
      throw new Error(
        `self-test failed: ${report.checks
          .filter((c) => !c.ok)
          .map((c) => c.name)
          .join(", ")}`,
      );
    // The tool's packs as each scripted model counts them (the self-test checked each fits), with
    // what the extension logged of each: how many asks, and the pack in o200k_base tokens.
    const rows = JSON.parse(report.checks.find((c) => c.name.startsWith("lm.invokeTool fits")).detail);
    const logged = s
      .readLogs(/smartctx\.smartctx\/SmartCtx\.log$/)
      .flatMap((file) => file.text.split("\n"))
      .filter((line) => line.includes("sized for the chat model"));
    if (logged.length !== rows.length)
      throw new Error(`${rows.length} tool calls, ${logged.length} sizing lines: ${logged.join("\n")}`);
    rows.forEach((row, index) => {
      const model = MODELS.find((m) => m.id === row.model);
      const line = logged[index].replace(/^.*sized for /, "");
      log(`#smartctx for ${row.model} (1 token per ${model.charsPerToken} chars), call ${row.call}: ${line}`);
      if (tokensOf(model, "x".repeat(row.chars)) !== row.tokens || row.tokens > row.budget)
        throw new Error(`${row.model}: ${row.tokens} / ${row.budget} tokens for ${row.chars} characters`);
      // Once a model's packs calibrated it, its first ask fits.
      if (row.call === 2 && !/ in 1 ask\(s\)/.test(line))
        throw new Error(`second call asked more than once: ${line}`);
    });
  });

  await step("09-unsaved-edit-changes-next-pack", async () => {
    await wb.openFile("app/pricing.py");
    const lines = fs.readFileSync(path.join(workspace, "app/pricing.py"), "utf8").split("\n").length;
    await wb.goTo(lines, 1);
    await wb.type(
      '\n\ndef loyalty_points(total: float) -> int:\n"""Points a customer earns for an order total."""\nreturn int(compute_total([("x", total, 1)]))\n',
    );
    const dirty = await wb.activeTab().getAttribute("class");
    if (!/dirty/.test(dirty || "")) throw new Error("the edit was saved; it must stay an unsaved buffer");
    await waitFor(
      "a pack that holds the unsaved function",
      async () => {
        await wb.runCommand("SmartCtx: Context for Task…");
        await wb.inputBox("Describe the task", "loyalty_points for an order total");
        const text = await wb.webviewText("SmartCtx: loyalty_points", { timeout: 20000 });
        return (
          /loyalty_points/.test(text.split("\n").slice(3).join("\n")) && /app\/pricing\.py:2\d-2\d/.test(text)
        );
      },
      { timeout: 45000, interval: 1000 },
    );
    // The request carried the editor state (the active, edited file): the panel's score of a body
    // from that file names its focus part.
    const panel = await wb.webviewFrame("SmartCtx: loyalty_points");
    const scores = await panel.evaluate(() =>
      [...document.querySelectorAll(".item-head")].map(
        (head) => head.textContent + " " + head.querySelector(".score")?.title,
      ),
    );
    if (!scores.some((line) => /app\/pricing\.py/.test(line) && /focusFile/.test(line))) {
      throw new Error(`no body from the edited file shows a focusFile part: ${scores.join(" | ")}`);
    }
  });

  await step("10-chat-add-context-resolves-to-a-pack", async () => {
    await wb.openFile("app/service.py");
    const pos = wordPosition("app/service.py", "def place_order", "place_order");
    await wb.goTo(pos.line, pos.column + 2);
    const chip = await wb.addChatContext("SmartCtx context", "SmartCtx: context for place_order");
    // The tooltip comes from resolveAttachChatContext, i.e. from the pack the server made.
    const tooltip = await wb.hoverText(chip);
    if (!/\d+ definitions in full, \d+ by signature/.test(tooltip))
      throw new Error(`attachment tooltip: ${tooltip}`);
  });

  await step("11-status-bar-click-then-reindex", async () => {
    await wb.page
      .locator(".part.statusbar .statusbar-item")
      .filter({ hasText: /SmartCtx/ })
      .first()
      .click();
    await wb.quickPick("Index status and actions", "Re-index");
    await waitFor(
      "the re-index notification",
      async () => /SmartCtx: re-indexed \d+ files/.test(await wb.notificationsText()),
      { timeout: 60000 },
    );
  });

  // A smaller budget holds fewer definitions: the files that rank next still show, one line each,
  // and a click opens one.
  let mapped;
  await step("12-small-budget-lists-other-likely-files", async () => {
    s.updateSettings({ "smartctx.budgetTokens": 600 });
    await waitFor(
      "a pack at the new budget with other likely files",
      async () => {
        await wb.runCommand("SmartCtx: Context for Task…");
        await wb.inputBox("Describe the task", TASK);
        // The setting reaches the extension a moment after the file changes: ask again only when
        // no pack at the new budget shows, so that no second request is left running.
        const text = await wb.webviewText("/ 600 tokens", { timeout: 10000 }).catch(() => "");
        return text.includes("Other likely files");
      },
      { timeout: 45000, interval: 1000 },
    );
    // The budget binds here, in the scripted model's tokens.
    const header = await wb.webviewText("/ 600 tokens");
    const shown = /([\d,]+) \/ 600 tokens, counted by scripted/.exec(header);
    if (!shown || number(shown[1]) > 600) throw new Error(`panel header: ${header.slice(0, 600)}`);
    log(`panel header at a budget of 600: ${shown[0]}`);
    const frame = await wb.webviewFrame("Other likely files");
    const entries = frame.locator("ul.file-map > li");
    mapped = await entries.first().locator("a.citation").first().innerText();
    log(`file map: ${(await entries.allInnerTexts()).join(" | ")}`);
    if (!/\.(py|ts|go)$/.test(mapped)) throw new Error(`the first file map entry is not a file: ${mapped}`);
    await frame.locator("ul.file-map").scrollIntoViewIfNeeded();
  });

  await step("12b-file-map-entry-opens-the-file", async () => {
    const frame = await wb.webviewFrame("Other likely files");
    await frame.locator("ul.file-map a.citation", { hasText: mapped }).first().click();
    await wb.waitForActiveEditor(path.basename(mapped));
    s.updateSettings({ "smartctx.budgetTokens": 8000 });
  });

  // A long docstring is shown by its first paragraph, a line naming the lines left out and its
  // closing line; the code after it comes whole.
  await step("13-long-docstring-shown-by-its-first-paragraph", async () => {
    const lines = FILES["app/refunds.py"].split("\n");
    const opening = lines.findIndex((l) => l.includes('"""Refund a share'));
    const closing = lines.findIndex((l, i) => i > opening && l.trim() === '"""');
    const note = `[docstring lines ${opening + 2}-${closing} not shown]`;
    await wb.runCommand("SmartCtx: Context for Task…");
    await wb.inputBox("Describe the task", "how is the refund of an order rounded");
    const text = await wb.webviewText(note, { timeout: 30000 });
    for (const want of [cite(refundOrder), "Refund a share of an order's total", "round(order"]) {
      if (!text.includes(want)) throw new Error(`panel lacks ${want}: ${text.slice(0, 1500)}`);
    }
    if (text.includes(">>> refund_order"))
      throw new Error(`the docstring's examples are shown: ${text.slice(0, 1500)}`);
    const frame = await wb.webviewFrame(note);
    await frame.locator("pre.code", { hasText: note }).first().scrollIntoViewIfNeeded();
  });
}
