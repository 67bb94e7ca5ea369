// What the status bar item says for a server state and the last index status. Pure, for tests.
import type { IndexStatus } from "./lsp_ext";
import type { ServerState } from "./server";

export interface StatusText {
  text: string;
  tooltip: string;
  error: boolean;
}

function count(value: number): string {
  return value.toLocaleString("en-US");
}

// Pure: what the item shows for a server state and the last index status.
export function statusText(state: ServerState, index: IndexStatus | undefined): StatusText {
  if (state.kind === "missing" || state.kind === "stopped") {
    return { text: "$(error) SmartCtx", tooltip: state.message, error: true };
  }
  if (state.kind === "starting" || index === undefined) {
    return {
      text: "$(loading~spin) SmartCtx",
      tooltip: `Starting: ${state.kind === "starting" ? state.description : "waiting for the index"}`,
      error: false,
    };
  }
  if (index.state === "failed") {
    return {
      text: "$(error) SmartCtx: index failed",
      tooltip: index.message ?? "The index could not be opened.",
      error: true,
    };
  }
  // A server older than indexedFiles (a venv not upgraded with the extension) does not send it.
  const indexed = (index.indexedFiles as number | undefined) ?? 0;
  const progress = index.filesTotal > 0 ? `${count(index.filesDone)}/${count(index.filesTotal)}` : "";
  if (index.state === "indexing" && indexed === 0) {
    return {
      text: `$(sync~spin) SmartCtx: indexing${progress ? ` ${progress}` : ""}`,
      tooltip: "Indexing the workspace; requests are answered from what is indexed so far.",
      error: false,
    };
  }
  // filesDone/filesTotal count the current batch of work; indexedFiles is the index's size.
  const files = `${count(indexed || index.filesTotal)} files`;
  if (index.state === "indexing") {
    return {
      text: `$(sync~spin) SmartCtx: ${files}`,
      tooltip: `Updating the index: ${progress} changed files done. Requests are answered meanwhile.`,
      error: false,
    };
  }
  const pending = index.pendingFiles > 0 ? `, ${count(index.pendingFiles)} pending` : "";
  return {
    text: `$(check) SmartCtx: ${files}${pending}`,
    tooltip: `Index ready: ${files}${pending}. Click for index status and actions.`,
    error: false,
  };
}
