/*
 * Minimal declaration of the `chatContextProvider` API proposal, written for smartctx.
 *
 * It mirrors the proposal as shipped in VS Code 1.139.1 (code-server 4.139.1), checked
 * against that build's extension host and workbench, not against a vscode-dts file.
 * It declares only what smartctx uses: the attach ("Add Context...") provider and the
 * workspace and tab providers.
 *
 * This is a proposed API. Stock VS Code throws when these functions are called unless
 * the extension lists "chatContextProvider" in package.json `enabledApiProposals` and
 * runs with `--enable-proposed-api <publisher.name>` (or in extension development mode).
 * code-server 4.139.1 patches the proposal check so that it always passes, but do not
 * rely on that: call these functions inside try/catch and feature-detect them first
 * (`typeof vscode.chat.registerChatAttachContextProvider === 'function'`).
 *
 * An attach provider also needs a static entry in package.json:
 *   "contributes": { "chatContext": [{ "id": "<id>", "icon": "$(codicon)", "displayName": "..." }] }
 * where `id` is the same id passed to registerChatAttachContextProvider. The picker entry
 * appears only once both the manifest entry and the runtime registration exist.
 */

declare module "vscode" {
  export namespace chat {
    /**
     * Registers a provider of context that is added, without being shown, to every chat request.
     * The host only calls `provideWorkspaceChatContext` at registration and each time
     * `onDidChangeWorkspaceChatContext` fires, so a provider without that event is never called.
     * Items without a `value` are dropped.
     */
    export function registerChatWorkspaceContextProvider(
      id: string,
      provider: ChatWorkspaceContextProvider,
    ): Disposable;

    /**
     * Registers the items offered in the chat input's "Add Context..." picker, under the entry
     * declared in `contributes.chatContext` with the same `id`.
     */
    export function registerChatAttachContextProvider(
      id: string,
      provider: ChatAttachContextProvider,
    ): Disposable;

    /**
     * Registers a provider of implicit context for the active editor tab: a text editor whose
     * document matches `selector.uri`, or a webview or custom editor whose `viewType` matches
     * `selector.viewType`. If several providers match, only the highest-scoring one is used.
     */
    export function registerChatTabContextProvider(
      selector: ChatTabContextSelector,
      id: string,
      provider: ChatTabContextProvider,
    ): Disposable;
  }

  /** Selects the tabs that a tab context provider applies to. */
  export type ChatTabContextSelector = { uri: DocumentSelector } | { viewType: string };

  /** One piece of chat context. The host rejects an item that has neither `label` nor `resourceUri`. */
  export interface ChatContextItem {
    /** Shown in the picker and on the attachment chip; defaults to the basename of `resourceUri`. */
    label?: string;
    /** Used for the label when `label` is not set. */
    resourceUri?: Uri;
    /** A ThemeIcon, a Uri, or a light/dark pair. */
    iconPath?: IconPath;
    /** Hover text on the attachment chip. */
    tooltip?: MarkdownString;
    /**
     * Describes the item to the language model. Workspace and tab items pass it on. Items the
     * user attaches from the picker lose it, so put anything the model needs into `value`.
     */
    modelDescription?: string;
    /**
     * The text given to the model. Leave it `undefined` in the provide methods to defer the work:
     * the host then calls the matching resolve method, and only for items whose value is `undefined`.
     */
    value?: string;
    /**
     * Runs when the user clicks an implicit (tab) context item. The item is passed as the
     * command's first argument, followed by `command.arguments`.
     */
    command?: Command;
  }

  export interface ChatWorkspaceContextProvider<T extends ChatContextItem = ChatContextItem> {
    /** Fire this to make the host call `provideWorkspaceChatContext` again. It is required in practice. */
    readonly onDidChangeWorkspaceChatContext?: Event<void>;
    provideWorkspaceChatContext(token: CancellationToken): ProviderResult<T[]>;
  }

  export interface ChatAttachContextProvider<T extends ChatContextItem = ChatContextItem> {
    /** Called each time the user opens this provider's entry in "Add Context...". */
    provideAttachChatContext(token: CancellationToken): ProviderResult<T[]>;
    /**
     * Called when the user picks an item whose `value` is `undefined`. It receives the same object
     * that `provideAttachChatContext` returned. The `label`, `iconPath`, `tooltip` and `value` of
     * the result become the attachment. If this returns nothing, the attachment has no value.
     */
    resolveAttachChatContext(context: T, token: CancellationToken): ProviderResult<ChatContextItem>;
  }

  export interface ChatTabContextProvider<T extends ChatContextItem = ChatContextItem> {
    /** Called when the active editor changes and `tab` matches this provider's selector. */
    provideChatTabContext(
      options: { readonly tab: Tab },
      token: CancellationToken,
    ): ProviderResult<T | undefined>;
    /**
     * Called for the `value` when the user adds the suggested item to the request. The host drops
     * the `value` that `provideChatTabContext` returned, so return the text here.
     */
    resolveChatTabContext(context: T, token: CancellationToken): ProviderResult<ChatContextItem>;
  }
}
