// Citations (1-based, inclusive, relative to a folder) -> the file and 0-based lines VS Code opens.
import { describe, expect, it } from "vitest";
import { CitationError, citationTarget } from "../../src/citations";

const ONE = ["file:///home/dev/shop"];
const TWO = ["file:///home/dev/shop", "file:///home/dev/billing"];

describe("citationTarget", () => {
  it.each([
    [
      "a single folder",
      { filePath: "shop/payments.py", startLine: 10, endLine: 17 },
      ONE,
      "file:///home/dev/shop/shop/payments.py",
      9,
      16,
    ],
    [
      "a one-line item",
      { filePath: "a.py", startLine: 1, endLine: 1 },
      ONE,
      "file:///home/dev/shop/a.py",
      0,
      0,
    ],
    [
      "the item's own folder in a multi-root pack",
      { filePath: "app/core.py", startLine: 9, endLine: 11, workspaceFolder: "file:///home/dev/billing" },
      TWO,
      "file:///home/dev/billing/app/core.py",
      8,
      10,
    ],
    [
      "a folder URI with a trailing slash",
      { filePath: "x.go", startLine: 3, endLine: 4, workspaceFolder: "file:///srv/repo/" },
      TWO,
      "file:///srv/repo/x.go",
      2,
      3,
    ],
    [
      "characters URIs escape",
      { filePath: "my dir/a#b.py", startLine: 2, endLine: 3 },
      ONE,
      "file:///home/dev/shop/my%20dir/a%23b.py",
      1,
      2,
    ],
  ])("resolves %s", (_case, item, folders, uri, start, end) => {
    expect(citationTarget(item, folders)).toEqual({ uri, startLine: start, endLine: end });
  });

  it.each([["../etc/passwd"], ["/etc/passwd"], ["a//b.py"]])("refuses the path %s", (filePath) => {
    expect(() => citationTarget({ filePath, startLine: 1, endLine: 1 }, ONE)).toThrow(CitationError);
  });

  it("needs an open folder", () => {
    expect(() => citationTarget({ filePath: "a.py", startLine: 1, endLine: 1 }, [])).toThrow(
      /no workspace folder/,
    );
  });
});
