// The status bar item: the server's state and the index's, from smartctx/indexStatus. A click opens
// the status quick pick (commands.ts).
import * as vscode from "vscode";
import type { Server } from "./server";
import { statusText } from "./status_text";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    "smartctx.status",
    vscode.StatusBarAlignment.Left,
    10,
  );
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly server: Server) {
    this.item.name = "SmartCtx";
    this.item.command = "smartctx.showIndexStatus";
    this.subscriptions = [
      server.onDidChangeState(() => {
        this.update();
      }),
      server.onDidChangeIndexStatus(() => {
        this.update();
      }),
    ];
    this.update();
    this.item.show();
  }

  private update(): void {
    const shown = statusText(this.server.state, this.server.lastIndexStatus);
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.backgroundColor = shown.error
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.item.dispose();
  }
}
