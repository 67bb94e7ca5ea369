// The command palette's entry points, each a factory over the extension's parts (as in
// rust-analyzer's commands.ts): context for a task, for the symbol at the cursor, for a symbol from
// a hover link; re-index; index status.
import * as vscode from "vscode";
import { budgetTokens } from "./config";
import { editorFocus, type RecentEdits } from "./focus";
import type { ContextForSymbolArguments, ContextForTaskParams, WireContextPack, WireNode } from "./lsp_ext";
import type { ContextPanel } from "./panel";
import { ServerNotRunningError, settingsReader, type Server } from "./server";
import { modelCounter, packFor, panelModel } from "./sizing";
import { statusText } from "./status_text";
import { tokenLine, type Calibration, type ModelCount } from "./token_fit";

const MAX_PREFILL_CHARS = 2000;

export interface Parts {
  server: Server;
  panel: ContextPanel;
  recent: RecentEdits;
  // Each chat model's tokens per tokenizer token, in the global state (token_fit.ts).
  calibration: Calibration;
}

// Shows an error a person can act on; the server's messages already say what to fix.
export async function showError(server: Server, error: unknown): Promise<void> {
  if (error instanceof vscode.CancellationError) return;
  const text = error instanceof Error ? error.message : String(error);
  const message = text.startsWith("SmartCtx") ? text : `SmartCtx: ${text}`;
  const choice = await vscode.window.showErrorMessage(message, "Show Log");
  if (choice === "Show Log") server.log.show();
  if (!(error instanceof ServerNotRunningError)) server.log.error(message);
}

function shortTitle(task: string): string {
  const line = task.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

// Asks for a pack under a cancellable progress notification; cancelling sends $/cancelRequest. The
// pack is counted by the chat model @smartctx last answered with, when there is one.
async function fetchPack(
  parts: Parts,
  params: ContextForTaskParams,
  symbolId?: string,
): Promise<{ pack: WireContextPack; count?: ModelCount; symbol?: WireNode } | undefined> {
  const { server } = parts;
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: "SmartCtx: finding the code for this task…",
      cancellable: true,
    },
    async (_progress, token) => {
      const model = await panelModel(parts);
      const stated = params.options?.budgetTokens;
      const budget = typeof stated === "number" ? stated : budgetTokens(settingsReader());
      const [sized, symbol] = await Promise.all([
        model
          ? packFor(parts, params, budget, modelCounter(model, token), token)
          : server.contextForTask(params, token).then((pack) => ({ pack })),
        symbolId === undefined ? Promise.resolve(undefined) : server.expand(symbolId, token),
      ]);
      return token.isCancellationRequested ? undefined : { ...sized, symbol };
    },
  );
}

// Fetches a pack and shows it in the panel; resolves once the panel has rendered it. The log keeps
// the two times a user waits through: the server's answer, and the panel on screen.
export async function showContext(
  parts: Parts,
  params: ContextForTaskParams,
  symbolId?: string,
): Promise<void> {
  try {
    const started = performance.now();
    const found = await fetchPack(parts, params, symbolId);
    if (!found) return;
    const answered = performance.now();
    const title = found.symbol
      ? `SmartCtx: ${found.symbol.qualifiedName}`
      : `SmartCtx: ${shortTitle(params.task ?? "")}`;
    await parts.panel.show({ title, ...found }, params);
    parts.server.log.info(
      `panel: pack in ${(answered - started).toFixed(0)} ms, rendered in ${(performance.now() - started).toFixed(0)} ms ` +
        `(${found.pack.bodies.length} bodies, ${found.pack.summaries.length} summaries, ${tokenLine(found.pack, found.count)})`,
    );
  } catch (error) {
    await showError(parts.server, error);
  }
}

// With a task argument (a keybinding's "args", another extension) the input box is skipped.
export function contextForTask(parts: Parts) {
  return async (given?: unknown): Promise<void> => {
    if (typeof given === "string" && given.trim()) {
      await showContext(parts, { task: given, focus: editorFocus(parts.recent) });
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    const task = await vscode.window.showInputBox({
      title: "SmartCtx: Context for Task",
      prompt: "Describe the task in plain words: what do you want to change, fix or understand?",
      placeHolder: "e.g. why does checkout fail when the card is declined?",
      value: selected.slice(0, MAX_PREFILL_CHARS),
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() ? undefined : "Describe the task first."),
    });
    if (!task?.trim()) return;
    await showContext(parts, { task, focus: editorFocus(parts.recent) });
  };
}

export function contextForSymbolAtCursor(parts: Parts) {
  return async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    const range = editor?.document.getWordRangeAtPosition(editor.selection.active);
    if (!editor || !range) {
      void vscode.window.showInformationMessage("SmartCtx: put the cursor on a name first.");
      return;
    }
    const task = editor.document.getText(range);
    await showContext(parts, { task, focus: editorFocus(parts.recent) });
  };
}

// The hover's command link: the symbol in full, and a pack focused on it.
export function contextForSymbol(parts: Parts) {
  return async (argument?: ContextForSymbolArguments): Promise<void> => {
    if (!argument || typeof argument.id !== "string" || typeof argument.qualifiedName !== "string") {
      void vscode.window.showErrorMessage("SmartCtx: this command is run from a SmartCtx hover link.");
      return;
    }
    const focus = editorFocus(parts.recent, vscode.Uri.parse(argument.uri));
    await showContext(parts, { task: argument.qualifiedName, focus }, argument.id);
  };
}

export function reindex(parts: Parts) {
  return async (): Promise<void> => {
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "SmartCtx: re-indexing the workspace…" },
        () => parts.server.reindex(),
      );
      void vscode.window.showInformationMessage(
        `SmartCtx: re-indexed ${result.filesTotal.toLocaleString("en-US")} files in ${result.seconds.toFixed(1)} s: ` +
          `${result.filesParsed} parsed, ${result.filesUnchanged} unchanged, ${result.filesDeleted} removed.`,
      );
    } catch (error) {
      await showError(parts.server, error);
    }
  };
}

export function showIndexStatus(parts: Parts) {
  return async (): Promise<void> => {
    const { server } = parts;
    let index = server.lastIndexStatus;
    if (server.state.kind === "running") {
      index = await server.indexStatus().catch(() => index);
    }
    const shown = statusText(server.state, index);
    const actions = [
      { label: "$(sync) Re-index", command: "smartctx.reindexWorkspace" },
      { label: "$(output) Show Log", command: "smartctx.showLog" },
      { label: "$(debug-restart) Restart Server", command: "smartctx.restartServer" },
      { label: "$(gear) Settings", command: "workbench.action.openSettings", argument: "smartctx" },
    ];
    const picked = await vscode.window.showQuickPick(
      [
        { label: shown.text, detail: shown.tooltip },
        { label: "", kind: vscode.QuickPickItemKind.Separator },
        ...actions,
      ],
      { title: `SmartCtx: ${shown.tooltip}`, placeHolder: "Index status and actions" },
    );
    if (picked && "command" in picked) {
      await vscode.commands.executeCommand(
        picked.command,
        ...("argument" in picked ? [picked.argument] : []),
      );
    }
  };
}
