// What the editor says about where the work is, sent with every request as `focus`: the active
// file and cursor, the open files (visible first) and the recently edited ones. Only files inside a
// workspace folder are sent: the server rejects any other.
import * as vscode from "vscode";
import type { WireFocus } from "./lsp_ext";

const MAX_OPEN = 20;
const MAX_RECENT = 20;

function inWorkspace(uri: vscode.Uri): boolean {
  return uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(uri) !== undefined;
}

// The files edited most recently, newest first: kept from the editor's change events.
export class RecentEdits implements vscode.Disposable {
  private readonly uris: string[] = [];
  private readonly subscription = vscode.workspace.onDidChangeTextDocument((event) => {
    if (event.contentChanges.length === 0 || !inWorkspace(event.document.uri)) return;
    const uri = event.document.uri.toString();
    const at = this.uris.indexOf(uri);
    if (at !== 0) {
      if (at > 0) this.uris.splice(at, 1);
      this.uris.unshift(uri);
      this.uris.length = Math.min(this.uris.length, MAX_RECENT);
    }
  });

  get recent(): readonly string[] {
    return this.uris;
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

export function editorFocus(recent: RecentEdits, overrideUri?: vscode.Uri): WireFocus {
  const focus: WireFocus = {};
  const editor = vscode.window.activeTextEditor;
  if (overrideUri && inWorkspace(overrideUri)) {
    focus.uri = overrideUri.toString();
  } else if (editor && inWorkspace(editor.document.uri)) {
    focus.uri = editor.document.uri.toString();
    const active = editor.selection.active;
    focus.position = { line: active.line, character: active.character };
  }
  const open: string[] = [];
  const add = (uri: vscode.Uri): void => {
    const text = uri.toString();
    if (inWorkspace(uri) && !open.includes(text) && open.length < MAX_OPEN) open.push(text);
  };
  for (const visible of vscode.window.visibleTextEditors) add(visible.document.uri);
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputText) add(tab.input.uri);
    }
  }
  if (open.length) focus.openUris = open;
  if (recent.recent.length) focus.recentUris = [...recent.recent];
  return focus;
}
