// Activation: wires the extension's parts together. Each entry point lives in its own module:
// server.ts (launch), panel.ts (the context panel), commands.ts (the palette), chat.ts (the
// participant and the tool), context_provider.ts ("Add Context…"), status.ts (the status bar).
import * as vscode from "vscode";
import { attachToChat, registerParticipant, registerTool } from "./chat";
import {
  contextForSymbol,
  contextForSymbolAtCursor,
  contextForTask,
  reindex,
  showContext,
  showError,
  showIndexStatus,
  type Parts,
} from "./commands";
import { registerContextProviders } from "./context_provider";
import { RecentEdits } from "./focus";
import { installPrivateEnvironment } from "./install";
import { CONTEXT_FOR_SYMBOL_COMMAND } from "./lsp_ext";
import { ContextPanel } from "./panel";
import { Server } from "./server";
import { StatusBar } from "./status";
import { Calibration } from "./token_fit";

export function activate(context: vscode.ExtensionContext): void {
  const started = performance.now();
  const log = vscode.window.createOutputChannel("SmartCtx", { log: true });
  const server = new Server(context, log);
  const recent = new RecentEdits();
  const parts: Parts = {
    server,
    recent,
    calibration: new Calibration(context.globalState),
    panel: new ContextPanel(context.extensionUri, {
      attachToChat,
      rerun: (params, symbolId) => showContext(parts, params, symbolId),
    }),
  };
  const command = (name: string, run: (...args: never[]) => Promise<void>): vscode.Disposable =>
    vscode.commands.registerCommand(name, run);
  context.subscriptions.push(
    log,
    server,
    recent,
    parts.panel,
    new StatusBar(server),
    command("smartctx.contextForTask", contextForTask(parts)),
    command("smartctx.contextForSymbolAtCursor", contextForSymbolAtCursor(parts)),
    command(CONTEXT_FOR_SYMBOL_COMMAND, contextForSymbol(parts)),
    command("smartctx.reindexWorkspace", reindex(parts)),
    command("smartctx.showIndexStatus", showIndexStatus(parts)),
    command("smartctx.showLog", () => {
      log.show();
      return Promise.resolve();
    }),
    command("smartctx.restartServer", () => server.restart("restart requested")),
    command("smartctx.installServer", () =>
      installPrivateEnvironment(server).catch((error: unknown) => showError(server, error)),
    ),
    registerParticipant(parts),
    registerTool(parts),
    ...registerContextProviders(parts),
  );
  // Activation returns at once; the server starts in the background and the status bar follows it.
  void server.start();
  log.info(`activated in ${(performance.now() - started).toFixed(1)} ms`);
}

export function deactivate(): void {
  // The subscriptions stop the server.
}
