// Builds the smartctx wheel from this checkout into bundled/, so the .vsix carries the server
// and "Install the Server into a Private Environment" needs no source tree.
//
// The build runs on a copy of the files git tracks or would track: setuptools puts into a wheel
// whatever an earlier build left in build/lib and the egg-info's SOURCES.txt, so a wheel built in
// place in a used checkout can carry files the source no longer has. tests/integration/test_wheel.py
// builds the same way and checks the wheel's contents.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

const here = import.meta.dirname;
const repo = path.dirname(here);
const venvPython = path.join(repo, ".venv", "bin", "python");
const python = process.env.SMARTCTX_PYTHON ?? (existsSync(venvPython) ? venvPython : "python3");
const bundled = path.join(here, "bundled");

function cleanCopy(target) {
  const listed = execFileSync("git", [
    "-C",
    repo,
    "ls-files",
    "--cached",
    "--others",
    "--exclude-standard",
    "-z",
  ]);
  for (const name of listed.toString().split("\0")) {
    const from = path.join(repo, name);
    // A tracked file deleted in the working tree is still listed; it is not part of the build.
    if (!name || !existsSync(from) || !statSync(from).isFile()) continue;
    mkdirSync(path.dirname(path.join(target, name)), { recursive: true });
    copyFileSync(from, path.join(target, name));
  }
}

rmSync(bundled, { recursive: true, force: true });
mkdirSync(bundled);
const source = mkdtempSync(path.join(tmpdir(), "smartctx-wheel-"));
let built = false;
try {
  cleanCopy(source);
  execFileSync(python, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", bundled, source], {
    stdio: "inherit",
  });
  built = true;
} catch (error) {
  console.error(
    `could not build the smartctx wheel with ${python} (${error.message}): run ./scripts/test once (it makes .venv), or set SMARTCTX_PYTHON`,
  );
} finally {
  rmSync(source, { recursive: true, force: true });
}
if (!built) process.exit(1);
console.log(`bundled/${readdirSync(bundled).join(", ")}`);
