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

// Another smartctx process (an agent's MCP server, the CLI, another window) writes the index that
// this server answers from; the text says so briefly, the tooltip who it is.
function following(index: IndexStatus): { text: string; tooltip: string } {
  // A server older than role (a venv not upgraded with the extension) does not send it.
  const role = (index.role as IndexStatus["role"] | undefined) ?? "writer";
  if (role === "writer") return { text: "", tooltip: "" };
  const writer =
    index.writerPid !== undefined
      ? `${index.writerCommand ?? "smartctx"} (pid ${index.writerPid})`
      : "another smartctx process";
  const whose = role === "mixed" ? "Some folders' indexes are" : "The index is";
  return {
    text: " (shared)",
    tooltip: ` ${whose} written by ${writer}; this server follows its updates and takes over writing when it exits.`,
  };
}

// Files and folders left out because their names are not UTF-8: the user can rename them.
function undecodable(index: IndexStatus): string {
  const total = index.undecodableCount ?? 0;
  if (total === 0) return "";
  const names = (index.undecodableNames ?? []).join(", ");
  const more = total > (index.undecodableNames ?? []).length ? " and more" : "";
  return ` ${count(total)} not indexed because their names are not UTF-8: ${names}${more}.`;
}

// A team's published base answers: while the folder's own first index is built, or for good
// (smartctx.baseIndexOnly), when only the files that differ from the base are indexed here.
function fromBase(
  base: string,
  indexing: boolean,
  progress: string,
  shared: { text: string; tooltip: string },
): StatusText {
  const here = indexing
    ? ` This folder's own index is being built${progress ? ` (${progress})` : ""}; it answers once complete.`
    : " Only the files that differ from it are indexed here.";
  return {
    text: `$(cloud) SmartCtx: ${base}${indexing ? ", indexing" : ""}${shared.text}`,
    tooltip: `Answered from your team's published index, ${base}.${here}${shared.tooltip} Click for index status and actions.`,
    error: false,
  };
}

// Pure: what the item shows for a server state and the last index status. A running server is named
// below the index's line; one whose version is not the carried wheel's turns the check into a warning.
export function statusText(state: ServerState, index: IndexStatus | undefined): StatusText {
  const shown = indexText(state, index);
  if (state.kind !== "running") return shown;
  const server = state.warning ?? state.detail;
  return {
    ...shown,
    text: state.warning ? shown.text.replace("$(check)", "$(warning)") : shown.text,
    tooltip: server ? `${shown.tooltip}\n\n${server}` : shown.tooltip,
  };
}

function indexText(state: ServerState, index: IndexStatus | undefined): StatusText {
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
  const shared = following(index);
  const progress = index.filesTotal > 0 ? `${count(index.filesDone)}/${count(index.filesTotal)}` : "";
  if (index.base !== undefined) return fromBase(index.base, index.state === "indexing", progress, shared);
  if (index.state === "indexing" && indexed === 0) {
    return {
      text: `$(sync~spin) SmartCtx: indexing${progress ? ` ${progress}` : ""}${shared.text}`,
      tooltip: `Indexing the workspace; requests are answered from what is indexed so far.${shared.tooltip}`,
      error: false,
    };
  }
  // filesDone/filesTotal count the current batch of work; indexedFiles is the index's size.
  const files = `${count(indexed || index.filesTotal)} files`;
  if (index.state === "indexing") {
    return {
      text: `$(sync~spin) SmartCtx: ${files}${shared.text}`,
      tooltip: `Updating the index: ${progress} changed files done. Requests are answered meanwhile.${shared.tooltip}`,
      error: false,
    };
  }
  const pending = index.pendingFiles > 0 ? `, ${count(index.pendingFiles)} pending` : "";
  return {
    text: `$(check) SmartCtx: ${files}${pending}${shared.text}`,
    tooltip: `Index ready: ${files}${pending}.${shared.tooltip}${undecodable(index)} Click for index status and actions.`,
    error: false,
  };
}
