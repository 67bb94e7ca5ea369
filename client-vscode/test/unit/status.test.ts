// The status bar's text through the server's and the index's states.
import { describe, expect, it } from "vitest";
import { statusText } from "../../src/status_text";

const RUNNING = { kind: "running", description: "python -m smartctx serve" } as const;

describe("statusText", () => {
  it.each([
    [
      "starting",
      { kind: "starting", description: "looking for smartctx" } as const,
      undefined,
      "$(loading~spin) SmartCtx",
      false,
    ],
    [
      "indexing",
      RUNNING,
      {
        state: "indexing",
        filesDone: 120,
        filesTotal: 1500,
        pendingFiles: 0,
        indexedFiles: 0,
        role: "writer",
      } as const,
      "$(sync~spin) SmartCtx: indexing 120/1,500",
      false,
    ],
    [
      "updating after the first index",
      RUNNING,
      {
        state: "indexing",
        filesDone: 0,
        filesTotal: 3,
        pendingFiles: 3,
        indexedFiles: 1500,
        role: "writer",
      } as const,
      "$(sync~spin) SmartCtx: 1,500 files",
      false,
    ],
    [
      "ready after a one-file update",
      RUNNING,
      {
        state: "ready",
        filesDone: 1,
        filesTotal: 1,
        pendingFiles: 0,
        indexedFiles: 1500,
        role: "writer",
      } as const,
      "$(check) SmartCtx: 1,500 files",
      false,
    ],
    [
      "ready, changes pending",
      RUNNING,
      {
        state: "ready",
        filesDone: 1500,
        filesTotal: 1500,
        pendingFiles: 4,
        indexedFiles: 1500,
        role: "writer",
      } as const,
      "$(check) SmartCtx: 1,500 files, 4 pending",
      false,
    ],
    [
      "failed",
      RUNNING,
      {
        state: "failed",
        filesDone: 0,
        filesTotal: 0,
        pendingFiles: 0,
        indexedFiles: 0,
        role: "writer",
        message: "disk full",
      } as const,
      "$(error) SmartCtx: index failed",
      true,
    ],
    [
      "following another process's index",
      RUNNING,
      {
        state: "ready",
        filesDone: 0,
        filesTotal: 0,
        pendingFiles: 0,
        indexedFiles: 1500,
        role: "follower",
        writerPid: 4321,
        writerCommand: "smartctx mcp",
      } as const,
      "$(check) SmartCtx: 1,500 files (shared)",
      false,
    ],
    ["missing", { kind: "missing", message: "not installed" } as const, undefined, "$(error) SmartCtx", true],
  ])("%s", (_case, state, index, text, error) => {
    expect(statusText(state, index)).toMatchObject({ text, error });
  });

  it("says why the index failed", () => {
    expect(
      statusText(RUNNING, {
        state: "failed",
        filesDone: 0,
        filesTotal: 0,
        pendingFiles: 0,
        indexedFiles: 0,
        role: "writer",
        message: "disk full",
      }).tooltip,
    ).toBe("disk full");
  });

  it("names the process whose index it follows", () => {
    expect(
      statusText(RUNNING, {
        state: "ready",
        filesDone: 0,
        filesTotal: 0,
        pendingFiles: 0,
        indexedFiles: 1500,
        role: "follower",
        writerPid: 4321,
        writerCommand: "smartctx mcp",
      }).tooltip,
    ).toBe(
      "Index ready: 1,500 files. The index is written by smartctx mcp (pid 4321); this server follows its" +
        " updates and takes over writing when it exits. Click for index status and actions.",
    );
  });

  const READY = {
    state: "ready",
    filesDone: 8,
    filesTotal: 8,
    pendingFiles: 0,
    indexedFiles: 8,
    role: "writer",
  } as const;

  it("names the server below the index", () => {
    const shown = statusText(
      { ...RUNNING, detail: "Server: smartctx 0.1.0, python3 (python3 on the PATH)." },
      READY,
    );
    expect(shown).toEqual({
      text: "$(check) SmartCtx: 8 files",
      tooltip:
        "Index ready: 8 files. Click for index status and actions.\n\nServer: smartctx 0.1.0, python3 (python3 on the PATH).",
      error: false,
    });
  });

  it("warns about a server of another version than the carried wheel", () => {
    const warning =
      "SmartCtx: smartctx 0.0.9 in python3 (python3 on the PATH) is older than the smartctx 0.1.0 this extension carries.";
    const shown = statusText({ ...RUNNING, warning }, READY);
    expect(shown.text).toBe("$(warning) SmartCtx: 8 files");
    expect(shown.tooltip.endsWith(`\n\n${warning}`)).toBe(true);
  });

  it("names the team's base while it answers", () => {
    const base = "base 1a2b3c4 + 3 local files";
    const forGood = statusText(RUNNING, {
      state: "ready",
      filesDone: 0,
      filesTotal: 0,
      pendingFiles: 0,
      indexedFiles: 0,
      role: "writer",
      base,
    });
    expect(forGood.text).toBe("$(cloud) SmartCtx: base 1a2b3c4 + 3 local files");
    expect(forGood.tooltip).toContain("Only the files that differ from it are indexed here.");
    const meanwhile = statusText(RUNNING, {
      state: "indexing",
      filesDone: 40,
      filesTotal: 2900,
      pendingFiles: 2860,
      indexedFiles: 0,
      role: "writer",
      base,
    });
    expect(meanwhile.text).toBe("$(cloud) SmartCtx: base 1a2b3c4 + 3 local files, indexing");
    expect(meanwhile.tooltip).toContain(
      "This folder's own index is being built (40/2,900); it answers once complete.",
    );
  });

  it("names the files left out because their names are not UTF-8", () => {
    expect(
      statusText(RUNNING, {
        state: "ready",
        filesDone: 0,
        filesTotal: 0,
        pendingFiles: 0,
        indexedFiles: 12,
        role: "writer",
        undecodableCount: 2,
        undecodableNames: ["caf\\xe9.py"],
      }).tooltip,
    ).toBe(
      "Index ready: 12 files. 2 not indexed because their names are not UTF-8: caf\\xe9.py and more." +
        " Click for index status and actions.",
    );
  });
});
