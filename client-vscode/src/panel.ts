// The context panel: one webview that shows the latest pack (render.ts) and turns the webview's
// clicks into editor actions. The webview only names what was clicked; the pack stays here.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { citationTarget, type CitedItem } from "./citations";
import type { ContextForTaskParams } from "./lsp_ext";
import { citedItem, renderPanel, renderPanelContent, type PanelView } from "./render";
import { statedBudget, tokenLine } from "./token_fit";

export interface PanelActions {
  attachToChat(view: PanelView): Promise<void>;
  rerun(params: ContextForTaskParams, symbolId: string | undefined): Promise<void>;
}

interface WebviewMessage {
  type?: unknown;
  item?: unknown;
}

// Opens a cited item in an editor with its lines selected; shared by the panel and chat.
export async function openCitation(item: CitedItem): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.toString());
  const target = citationTarget(item, folders);
  const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(target.uri));
  const last = Math.min(target.endLine, document.lineCount - 1);
  const selection = new vscode.Selection(
    target.startLine,
    0,
    last,
    document.lineAt(last).range.end.character,
  );
  await vscode.window.showTextDocument(document, {
    selection,
    viewColumn: vscode.ViewColumn.One,
    preview: false,
  });
}

export function citationLocation(item: CitedItem): vscode.Location {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.toString());
  const target = citationTarget(item, folders);
  return new vscode.Location(
    vscode.Uri.parse(target.uri),
    new vscode.Range(target.startLine, 0, target.endLine, Number.MAX_SAFE_INTEGER),
  );
}

// How long show() waits for the webview to say it rendered: a hidden or busy webview must not hang
// the command that opened it.
const RENDER_WAIT_MS = 5000;

export class ContextPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private view: PanelView | undefined;
  private params: ContextForTaskParams | undefined;
  private rendered: (() => void) | undefined;
  // Whether the webview has loaded our document: then a new view is sent as content, which is
  // several times faster than loading a new document.
  private loaded = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly actions: PanelActions,
  ) {}

  get current(): PanelView | undefined {
    return this.view;
  }

  // Shows the view; resolves once the webview has rendered it (or after RENDER_WAIT_MS).
  show(view: PanelView, params: ContextForTaskParams): Promise<void> {
    this.view = view;
    this.params = params;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "smartctx.context",
        view.title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
        { enableScripts: true, localResourceRoots: [media], retainContextWhenHidden: true },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.loaded = false;
      });
      this.panel.webview.onDidReceiveMessage((message: WebviewMessage) => this.onMessage(message));
    }
    const webview = this.panel.webview;
    const rendered = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, RENDER_WAIT_MS);
      this.rendered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.panel.title = view.title;
    if (this.loaded) {
      void webview.postMessage({ type: "show", title: view.title, content: renderPanelContent(view) });
    } else {
      webview.html = renderPanel(view, {
        nonce: randomBytes(16).toString("base64"),
        cspSource: webview.cspSource,
        scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.js")).toString(),
        styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css")).toString(),
      });
    }
    this.panel.reveal(undefined, false);
    return rendered;
  }

  private async onMessage(message: WebviewMessage): Promise<void> {
    const view = this.view;
    if (!view) return;
    try {
      if (message.type === "rendered") {
        this.loaded = true;
        this.rendered?.();
      } else if (message.type === "open" && typeof message.item === "string") {
        const item = citedItem(view, message.item);
        if (item) await openCitation(item);
      } else if (message.type === "copy") {
        await vscode.env.clipboard.writeText(view.count?.text ?? view.pack.text);
        void vscode.window.showInformationMessage(
          `SmartCtx: copied the pack as Markdown (${tokenLine(view.pack, view.count)}).`,
        );
      } else if (message.type === "attach") {
        await this.actions.attachToChat(view);
      } else if (message.type === "rerun" && this.params) {
        const options = { ...this.params.options, budgetTokens: statedBudget(view.pack, view.count) * 2 };
        await this.actions.rerun({ ...this.params, options }, view.symbol?.id);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(
        `SmartCtx: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
