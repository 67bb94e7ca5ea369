// VS Code's token counts for token_fit.ts: a chat model's countTokens, a tool call's
// tokenizationOptions, the chat model the panel counts with, and the pack asked for in them.
import * as vscode from "vscode";
import type { Parts } from "./commands";
import type { ContextForTaskParams, WireContextPack } from "./lsp_ext";
import { PROBE_TEXT, fitPack, type ModelCount, type ModelCounter } from "./token_fit";

// What a model's tokenizer said when asked to count: the pack is then counted by the server alone.
export class TokenCountError extends Error {
  constructor(model: string, cause: unknown) {
    super(`${model} could not count tokens: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

function counting(name: string, count: (text: string) => Thenable<number>): ModelCounter["count"] {
  return async (text) => {
    try {
      return await count(text);
    } catch (error) {
      if (error instanceof vscode.CancellationError) throw error;
      throw new TokenCountError(name, error);
    }
  };
}

export function modelCounter(model: vscode.LanguageModelChat, token: vscode.CancellationToken): ModelCounter {
  return {
    name: model.id,
    key: `model:${model.id}`,
    count: counting(model.id, (text) => model.countTokens(text, token)),
  };
}

// A tool call names no model, only its countTokens: its count of the probe keys its calibration, so
// models that tokenize alike share one.
export async function toolCounter(
  options: vscode.LanguageModelToolTokenizationOptions,
  token: vscode.CancellationToken,
): Promise<ModelCounter> {
  const name = "the chat model";
  const count = counting(name, (text) => options.countTokens(text, token));
  const probeTokens = await count(PROBE_TEXT);
  return { name, key: `countTokens:${probeTokens}`, count, probeTokens };
}

// A pack of `budgetTokens` as `counter` counts it; when the model cannot count, the pack of that
// budget in the server's tokenizer, and the log says why.
export async function packFor(
  parts: Parts,
  params: ContextForTaskParams,
  budgetTokens: number,
  counter: ModelCounter | Promise<ModelCounter>,
  token: vscode.CancellationToken,
): Promise<{ pack: WireContextPack; count?: ModelCount }> {
  const ask = (options: Record<string, unknown>): Promise<WireContextPack> =>
    parts.server.contextForTask({ ...params, options: { ...params.options, ...options } }, token);
  try {
    const model = await counter;
    const sized = await fitPack(ask, budgetTokens, model, parts.calibration);
    const { count } = sized;
    parts.server.log.info(
      `sized for ${count.model} (${model.key}): ${count.tokens} / ${count.budgetTokens} tokens in ${count.asks} ask(s)` +
        ` at ${sized.pack.metadata.tokenScale.toFixed(3)} per ${sized.pack.metadata.tokenizer} token` +
        ` (${sized.pack.tokensUsed} / ${sized.pack.budgetTokens})${count.cut ? ", cut to fit" : ""}`,
    );
    return sized;
  } catch (error) {
    if (!(error instanceof TokenCountError)) throw error;
    parts.server.log.warn(`${error.message}; the pack is counted in the server's tokenizer`);
    return { pack: await ask({ budgetTokens }) };
  }
}

// The chat model the panel counts with: the one @smartctx last answered with, while VS Code has it.
export async function panelModel(parts: Parts): Promise<vscode.LanguageModelChat | undefined> {
  const id = parts.calibration.chatModel;
  if (id === undefined) return undefined;
  const [model] = await vscode.lm.selectChatModels({ id });
  return model;
}
