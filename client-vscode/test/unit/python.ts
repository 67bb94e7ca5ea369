// The Python that has smartctx installed, for tests that need the real server side.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { WireContextPack } from "../../src/lsp_ext";

export const repo = path.resolve(__dirname, "../../..");

export function python(): string {
  const configured = process.env.SMARTCTX_PYTHON;
  if (configured) return configured;
  const venv = path.join(repo, ".venv", "bin", "python");
  if (existsSync(venv)) return venv;
  throw new Error(
    "these tests need Python with smartctx installed: run ./scripts/test once (it makes .venv), " +
      "or set SMARTCTX_PYTHON",
  );
}

// A real pack, made by `smartctx context --format json` over a fresh copy of the shop fixture.
export function realPack(task: string, ...flags: string[]): WireContextPack {
  const work = mkdtempSync(path.join(tmpdir(), "smartctx-client-test-"));
  const root = path.join(work, "shop");
  cpSync(path.join(repo, "tests", "fixtures", "shop"), root, { recursive: true });
  const out = execFileSync(
    python(),
    [
      "-m",
      "smartctx",
      "context",
      task,
      "--root",
      root,
      "--index-dir",
      path.join(work, "index"),
      "--format",
      "json",
      "--quiet",
      ...flags,
    ],
    { encoding: "utf8" },
  );
  return JSON.parse(out) as WireContextPack;
}
