// "Add Context…" in Copilot Chat, through the proposed chatContextProvider API (declared in
// vscode.proposed.chatContextProvider.d.ts). Registered only where the API exists, and inside
// try/catch: stable VS Code without the proposal enabled throws on the call, and the extension must
// work there all the same.
import * as path from "node:path";
import * as vscode from "vscode";
import type { Parts } from "./commands";
import { editorFocus } from "./focus";
import type { ContextForTaskParams } from "./lsp_ext";

// The same id as package.json contributes.chatContext.
export const CHAT_CONTEXT_ID = "smartctx.context";
const ICON = new vscode.ThemeIcon("search");

interface PackItem extends vscode.ChatContextItem {
  params?: ContextForTaskParams;
}

async function resolvePack(
  parts: Parts,
  item: PackItem,
  token: vscode.CancellationToken,
): Promise<vscode.ChatContextItem> {
  if (!item.params) return item;
  const pack = await parts.server.contextForTask(item.params, token);
  return {
    label: item.label,
    iconPath: ICON,
    tooltip: new vscode.MarkdownString(
      `${pack.bodies.length} definitions in full, ${pack.summaries.length} by signature`,
    ),
    value: pack.text,
  };
}

// The task an editor suggests: the selection, else the name under the cursor, else the file.
function editorTask(editor: vscode.TextEditor): { task: string; label: string } {
  if (!editor.selection.isEmpty) {
    return { task: editor.document.getText(editor.selection), label: "SmartCtx: context for the selection" };
  }
  const word = editor.document.getWordRangeAtPosition(editor.selection.active);
  if (word) {
    const name = editor.document.getText(word);
    return { task: name, label: `SmartCtx: context for ${name}` };
  }
  const file = vscode.workspace.asRelativePath(editor.document.uri, false);
  return { task: file, label: `SmartCtx: context for ${path.basename(file)}` };
}

function attachProvider(parts: Parts): vscode.ChatAttachContextProvider<PackItem> {
  return {
    provideAttachChatContext() {
      const items: PackItem[] = [];
      const current = parts.panel.current;
      if (current) {
        items.push({
          label: `SmartCtx: ${current.title.replace(/^SmartCtx: /, "")} (from the panel)`,
          iconPath: ICON,
          value: current.count?.text ?? current.pack.text,
        });
      }
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.uri.scheme === "file") {
        const { task, label } = editorTask(editor);
        items.push({ label, iconPath: ICON, params: { task, focus: editorFocus(parts.recent) } });
      }
      return items;
    },
    resolveAttachChatContext: (item, token) => resolvePack(parts, item, token),
  };
}

function tabProvider(parts: Parts): vscode.ChatTabContextProvider<PackItem> {
  return {
    provideChatTabContext({ tab }) {
      if (
        !(tab.input instanceof vscode.TabInputText) ||
        vscode.workspace.getWorkspaceFolder(tab.input.uri) === undefined
      ) {
        return undefined;
      }
      const uri = tab.input.uri;
      const file = vscode.workspace.asRelativePath(uri, false);
      return {
        label: `SmartCtx: code related to ${path.basename(file)}`,
        iconPath: ICON,
        modelDescription: `Code from the workspace related to ${file}, chosen by SmartCtx`,
        params: { task: file, focus: editorFocus(parts.recent, uri) },
      };
    },
    resolveChatTabContext: (item, token) => resolvePack(parts, item, token),
  };
}

export function registerContextProviders(parts: Parts): vscode.Disposable[] {
  const chat = vscode.chat as Partial<typeof vscode.chat>;
  const registered: vscode.Disposable[] = [];
  try {
    if (typeof chat.registerChatAttachContextProvider === "function") {
      registered.push(chat.registerChatAttachContextProvider(CHAT_CONTEXT_ID, attachProvider(parts)));
    }
    if (typeof chat.registerChatTabContextProvider === "function") {
      const selector = { uri: [{ scheme: "file" }] };
      registered.push(chat.registerChatTabContextProvider(selector, CHAT_CONTEXT_ID, tabProvider(parts)));
    }
    parts.server.log.info(`chat context providers registered: ${registered.length}`);
  } catch (error) {
    parts.server.log.info(
      `chat context providers not available in this VS Code (${String(error)}); the rest works without them`,
    );
  }
  return registered;
}
