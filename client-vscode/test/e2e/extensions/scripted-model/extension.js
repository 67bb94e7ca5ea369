// Test only: a scripted, offline chat model (vendor "smartctx-e2e", id "scripted").
// Its reply proves what it was given: "Scripted answer. Context had N citations: <first citation>",
// counting distinct `path:start-end` patterns in the text of all request messages.
// It also appends each request to $SMARTCTX_E2E_MODEL_LOG (JSON lines) when that variable is set.
"use strict";
const vscode = require("vscode");
const fs = require("fs");

const CITATION = /[A-Za-z0-9_.\-/]+\.[A-Za-z0-9]+:\d+-\d+/g;

const MODEL = {
  id: "scripted",
  name: "Scripted Model (e2e)",
  family: "scripted",
  version: "1",
  tooltip: "Offline scripted model for end-to-end tests",
  detail: "e2e",
  maxInputTokens: 200000,
  maxOutputTokens: 4096,
  capabilities: { toolCalling: false, imageInput: false },
};

function partText(part) {
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  if (part instanceof vscode.LanguageModelToolResultPart) return (part.content || []).map(partText).join("");
  if (part && typeof part.value === "string") return part.value;
  if (typeof part === "string") return part;
  return "";
}

function messageText(message) {
  if (typeof message === "string") return message;
  if (typeof message.content === "string") return message.content;
  return (message.content || []).map(partText).join("");
}

function reply(messages) {
  const all = messages.map(messageText).join("\n");
  const citations = [...new Set(all.match(CITATION) || [])];
  return `Scripted answer. Context had ${citations.length} citations: ${citations[0] || "none"}`;
}

function activate(context) {
  const provider = {
    provideLanguageModelChatInformation() {
      return [MODEL];
    },
    async provideLanguageModelChatResponse(model, messages, options, progress, token) {
      const text = reply(messages);
      if (process.env.SMARTCTX_E2E_MODEL_LOG) {
        const entry = {
          at: new Date().toISOString(),
          reply: text,
          messages: messages.map((m) => ({ role: m.role, text: messageText(m) })),
        };
        fs.appendFileSync(process.env.SMARTCTX_E2E_MODEL_LOG, JSON.stringify(entry) + "\n");
      }
      // Streamed in a few parts, like a real model.
      for (const piece of text.match(/.{1,24}/gs) || []) {
        if (token.isCancellationRequested) return;
        progress.report(new vscode.LanguageModelTextPart(piece));
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async provideTokenCount(model, text) {
      const s = typeof text === "string" ? text : messageText(text);
      return Math.ceil(s.length / 4);
    },
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider("smartctx-e2e", provider));

  // Opens the chat view with this model selected and sends the query (the palette cannot pass arguments).
  context.subscriptions.push(
    vscode.commands.registerCommand("smartctxE2e.askChat", async (query) => {
      if (typeof query !== "string") {
        query = await vscode.window.showInputBox({ prompt: "Chat query for the scripted model" });
        if (query === undefined) return;
      }
      await vscode.commands.executeCommand("workbench.action.chat.open", {
        query,
        modelSelector: { vendor: "smartctx-e2e", id: "scripted" },
      });
    }),
  );
}

module.exports = { activate, deactivate() {}, reply };
