// What the editor says about where the work is, sent with every request as `focus`: the active
// file and cursor, the open files (visible first) and the recently edited ones with the time of
// each file's last edit. Only files inside a workspace folder are sent: the server rejects any other.
import * as vscode from "vscode";
import { EditLog, openFiles } from "./focus_state";
import type { WireFocus } from "./lsp_ext";

function inWorkspace(uri: vscode.Uri): boolean {
  return uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(uri) !== undefined;
}

// The files edited most recently, kept from the editor's change events.
export class RecentEdits implements vscode.Disposable {
  readonly log = new EditLog();
  private readonly subscription = vscode.workspace.onDidChangeTextDocument((event) => {
    if (event.contentChanges.length === 0 || !inWorkspace(event.document.uri)) return;
    this.log.record(event.document.uri.toString(), Date.now());
  });

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
  const visible = vscode.window.visibleTextEditors
    .map((shown) => shown.document.uri)
    .filter(inWorkspace)
    .map((uri) => uri.toString());
  const tabs = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .flatMap((tab) => (tab.input instanceof vscode.TabInputText ? [tab.input.uri] : []))
    .filter(inWorkspace)
    .map((uri) => uri.toString());
  const open = openFiles(visible, tabs);
  if (open.length) focus.openFiles = open;
  const edits = recent.log.wire();
  if (edits.length) focus.recentEdits = edits;
  return focus;
}
