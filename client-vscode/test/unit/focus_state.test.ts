// The focus a request carries: open files with the visible ones first, recent edits newest first.
import { describe, expect, it } from "vitest";
import { EditLog, MAX_OPEN, MAX_RECENT, openFiles } from "../../src/focus_state";

describe("openFiles", () => {
  it("lists visible files first, then the other tabs, each once", () => {
    expect(openFiles(["file:///w/b.py", "file:///w/a.py"], ["file:///w/a.py", "file:///w/c.py"])).toEqual([
      { uri: "file:///w/b.py", visible: true },
      { uri: "file:///w/a.py", visible: true },
      { uri: "file:///w/c.py", visible: false },
    ]);
  });

  it("stops at MAX_OPEN files", () => {
    const tabs = Array.from({ length: MAX_OPEN + 5 }, (_, index) => `file:///w/${index}.py`);
    const files = openFiles(["file:///w/shown.py"], tabs);
    expect(files).toHaveLength(MAX_OPEN);
    expect(files[0]).toEqual({ uri: "file:///w/shown.py", visible: true });
  });
});

describe("EditLog", () => {
  it("keeps each file once, at the time of its last edit, newest first", () => {
    const log = new EditLog();
    log.record("file:///w/a.py", Date.UTC(2026, 11, 1, 9, 0, 0));
    log.record("file:///w/b.py", Date.UTC(2026, 11, 1, 9, 5, 0));
    log.record("file:///w/a.py", Date.UTC(2026, 11, 1, 9, 10, 0));
    expect(log.wire()).toEqual([
      { uri: "file:///w/a.py", editedAt: "2026-12-01T09:10:00.000Z" },
      { uri: "file:///w/b.py", editedAt: "2026-12-01T09:05:00.000Z" },
    ]);
  });

  it("forgets the oldest edit beyond MAX_RECENT files", () => {
    const log = new EditLog();
    for (let index = 0; index <= MAX_RECENT; index++) log.record(`file:///w/${index}.py`, index * 1000);
    const uris = log.wire().map((edit) => edit.uri);
    expect(uris).toHaveLength(MAX_RECENT);
    expect(uris[0]).toBe(`file:///w/${MAX_RECENT}.py`);
    expect(uris).not.toContain("file:///w/0.py");
  });
});
