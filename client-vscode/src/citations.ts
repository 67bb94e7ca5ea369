// Where a pack item's citation points: which workspace folder, which file, which 0-based lines.
// Pure, so it is unit-tested without VS Code; panel.ts and chat.ts turn it into a Location.

export interface CitedItem {
  filePath: string;
  // 1-based and inclusive, as the server cites them.
  startLine: number;
  endLine: number;
  // Only in packs over several workspace folders: the folder filePath is relative to.
  workspaceFolder?: string;
}

export interface CitationTarget {
  // The file's URI, as a string (file:///…).
  uri: string;
  // 0-based and inclusive: the first and last line of the cited range.
  startLine: number;
  endLine: number;
}

export class CitationError extends Error {}

// The target of an item, given the workspace folders' URIs in the order VS Code lists them. A
// single-folder pack has no workspaceFolder and is relative to the one folder the server was
// started on, the first.
export function citationTarget(item: CitedItem, folderUris: readonly string[]): CitationTarget {
  const folder = item.workspaceFolder ?? folderUris[0];
  if (folder === undefined) {
    throw new CitationError(`no workspace folder is open to resolve ${item.filePath}`);
  }
  if (
    item.filePath.split("/").some((part) => part === ".." || part === "") ||
    item.filePath.startsWith("/")
  ) {
    throw new CitationError(`the server cited a path outside its folder: ${item.filePath}`);
  }
  const base = folder.endsWith("/") ? folder.slice(0, -1) : folder;
  const path = item.filePath.split("/").map(encodeURIComponent).join("/");
  const startLine = Math.max(0, item.startLine - 1);
  return { uri: `${base}/${path}`, startLine, endLine: Math.max(startLine, item.endLine - 1) };
}
