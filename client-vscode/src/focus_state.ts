// The editor state sent as `focus`, without VS Code: the bounded log of recent edits and the list of
// open files, visible ones first. Pure, for tests; focus.ts feeds it from the editor.
import type { WireOpenFile, WireRecentEdit } from "./lsp_ext";

// An editor has a few dozen files open at most that say where the work is; the server accepts
// MAX_FOCUS_FILES, far more than is useful.
export const MAX_OPEN = 20;
export const MAX_RECENT = 20;

// The files edited most recently, newest first, each once, with the time of its last edit.
export class EditLog {
  private readonly edits: { uri: string; at: number }[] = [];

  record(uri: string, at: number): void {
    const index = this.edits.findIndex((edit) => edit.uri === uri);
    if (index >= 0) this.edits.splice(index, 1);
    this.edits.unshift({ uri, at });
    this.edits.length = Math.min(this.edits.length, MAX_RECENT);
  }

  wire(): WireRecentEdit[] {
    return this.edits.map((edit) => ({ uri: edit.uri, editedAt: new Date(edit.at).toISOString() }));
  }
}

// The visible files first (in the order given), then the other open tabs, each once, at most MAX_OPEN.
export function openFiles(visible: readonly string[], tabs: readonly string[]): WireOpenFile[] {
  const files: WireOpenFile[] = [];
  const seen = new Set<string>();
  for (const [uris, shown] of [
    [visible, true],
    [tabs, false],
  ] as const) {
    for (const uri of uris) {
      if (seen.has(uri) || files.length >= MAX_OPEN) continue;
      seen.add(uri);
      files.push({ uri, visible: shown });
    }
  }
  return files;
}
