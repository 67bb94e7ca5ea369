// Test only: scripted, offline chat models (vendor "smartctx-e2e"; ids and token counts in
// models.json, "scripted" the default). A reply proves what the model was given: "Scripted answer.
// Context had N citations: <first citation>", counting distinct `path:start-end` patterns in the
// text of all request messages. Each model counts tokens as no tiktoken encoding does, one per so
// many characters, so a client that sizes packs by countTokens is seen to use it.
// It also appends each request to $SMARTCTX_E2E_MODEL_LOG (JSON lines) when that variable is set.
"use strict";
const vscode = require("vscode");
const fs = require("fs");
const { models } = require("./models.json");

const CITATION = /[A-Za-z0-9_.\-/]+\.[A-Za-z0-9]+:\d+-\d+/g;

const MODELS = models.map((model) => ({
  id: model.id,
  name: model.name,
  family: model.id,
  version: "1",
  tooltip: `Offline scripted model for end-to-end tests: one token per ${model.charsPerToken} characters`,
  detail: "e2e",
  maxInputTokens: model.maxInputTokens,
  maxOutputTokens: 4096,
  capabilities: { toolCalling: false, imageInput: false },
}));

// The model's token count of a text: one token per charsPerToken characters, rounded up.
function tokenCount(id, text) {
  const model = models.find((m) => m.id === id);
  if (!model) throw new Error(`no scripted model ${id}`);
  return Math.ceil(text.length / model.charsPerToken);
}

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
      return MODELS;
    },
    async provideLanguageModelChatResponse(model, messages, options, progress, token) {
      const text = reply(messages);
      if (process.env.SMARTCTX_E2E_MODEL_LOG) {
        const entry = {
          at: new Date().toISOString(),
          reply: text,
          model: model.id,
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
      return tokenCount(model.id, typeof text === "string" ? text : messageText(text));
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

module.exports = { activate, deactivate() {}, reply, tokenCount };
