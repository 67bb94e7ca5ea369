// Builds the smartctx wheel from this checkout into bundled/, so the .vsix carries the server
// and "Install the Server into a Private Environment" needs no source tree.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import * as path from "node:path";

const here = import.meta.dirname;
const repo = path.dirname(here);
const venvPython = path.join(repo, ".venv", "bin", "python");
const python = process.env.SMARTCTX_PYTHON ?? (existsSync(venvPython) ? venvPython : "python3");
const bundled = path.join(here, "bundled");

rmSync(bundled, { recursive: true, force: true });
mkdirSync(bundled);
try {
  execFileSync(python, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", bundled, repo], {
    stdio: "inherit",
  });
} catch {
  console.error(
    `could not build the smartctx wheel with ${python}: run ./scripts/test once (it makes .venv), or set SMARTCTX_PYTHON`,
  );
  process.exit(1);
}
console.log(`bundled/${readdirSync(bundled).join(", ")}`);
