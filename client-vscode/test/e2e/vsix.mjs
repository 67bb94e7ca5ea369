// Packages a plain-JS extension folder into a .vsix with @vscode/vsce (no build step, no dependencies).
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { E2E_DIR, NODE24 } from "./harness.mjs";

const VSCE = path.join(E2E_DIR, "node_modules/@vscode/vsce/vsce");

export async function packageExtension(srcDir, outDir) {
  if (!fs.existsSync(VSCE))
    throw new Error(
      "@vscode/vsce missing: run client-vscode/scripts/toolchain.sh (it runs npm ci in test/e2e)",
    );
  const pkg = JSON.parse(fs.readFileSync(path.join(srcDir, "package.json"), "utf8"));
  fs.mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, `${pkg.publisher}.${pkg.name}-${pkg.version}.vsix`);
  const args = [
    VSCE,
    "package",
    "--no-dependencies",
    "--skip-license",
    "--allow-missing-repository",
    "--allow-star-activation",
    "-o",
    out,
  ];
  await promisify(execFile)(NODE24, args, { cwd: srcDir, timeout: 60000 }).catch((err) => {
    throw new Error(`vsce package ${srcDir} failed: ${err.stderr || err.stdout || err.message}`);
  });
  return out;
}

/** The two test-only extensions (scripted model, in-host self-test), packaged into outDir. */
export async function packageTestExtensions(outDir) {
  return Promise.all(
    ["scripted-model", "self-test"].map((name) =>
      packageExtension(path.join(E2E_DIR, "extensions", name), outDir),
    ),
  );
}
