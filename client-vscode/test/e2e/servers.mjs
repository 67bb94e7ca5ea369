// smartctx installed as a user installs it, for scenarios that start with a server already there: the
// wheel a .vsix carries, wheels of other versions built from this checkout or from its history (a
// release before some change), and virtual environments made from them (never editable).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PYTHON, REPO_DIR, log } from "./harness.mjs";
import { packageExtension } from "./vsix.mjs";

// The interpreter venvs are made with: a plain Python on the PATH, as a user has.
const BASE_PYTHON = "python3";

function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
}

/** Extracts the wheel in `vsix`'s bundled/ folder into `dir`; returns its path. */
export function carriedWheel(vsix, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const script = [
    "import pathlib, sys, zipfile",
    "archive = zipfile.ZipFile(sys.argv[1])",
    "names = [n for n in archive.namelist() if n.startswith('extension/bundled/') and n.endswith('.whl')]",
    "assert len(names) == 1, f'the .vsix carries {len(names)} wheels: {names}'",
    "target = pathlib.Path(sys.argv[2], pathlib.PurePosixPath(names[0]).name)",
    "target.write_bytes(archive.read(names[0]))",
    "print(target)",
  ].join("\n");
  return run(PYTHON, ["-c", script, vsix, dir]).trim();
}

/** The version of a wheel, from its file name (PEP 427). */
export function wheelVersion(wheel) {
  return path.basename(wheel).split("-")[1];
}

/** The last commit before `text` first appeared in `file` (a release from before a change). */
export function commitBefore(text, file) {
  const commits = run("git", ["-C", REPO_DIR, "log", "--format=%H", "-S", text, "--", file])
    .trim()
    .split("\n");
  const introduced = commits.at(-1);
  if (!introduced)
    throw new Error(`no commit in this checkout's history adds "${text}" to ${file} (a shallow clone?)`);
  return run("git", ["-C", REPO_DIR, "rev-parse", `${introduced}^`]).trim();
}

/**
 * Builds a smartctx wheel into `dir` from this checkout's working tree, or from `commit`, with
 * pyproject's version replaced by `version` when given; returns its path.
 */
export function buildWheel(dir, { commit, version } = {}) {
  // Not "src": setuptools takes a project folder of that name for a src layout and fails.
  const source = path.join(dir, "smartctx-source");
  fs.mkdirSync(source, { recursive: true });
  const files = ["pyproject.toml", "README.md", "server"];
  if (commit) {
    const archive = path.join(dir, "source.tar");
    run("git", ["-C", REPO_DIR, "archive", "--output", archive, commit, ...files]);
    run("tar", ["-xf", archive, "-C", source]);
  } else {
    for (const file of files)
      fs.cpSync(path.join(REPO_DIR, file), path.join(source, file), {
        recursive: true,
        filter: (from) => !from.includes("__pycache__"),
      });
  }
  if (version) {
    const pyproject = path.join(source, "pyproject.toml");
    const text = fs.readFileSync(pyproject, "utf8");
    const changed = text.replace(/^version = ".*"$/m, `version = "${version}"`);
    if (changed === text) throw new Error("pyproject.toml has no version line to change");
    fs.writeFileSync(pyproject, changed);
  }
  const wheels = path.join(dir, "wheels");
  run(PYTHON, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", wheels, source]);
  const [wheel] = fs.readdirSync(wheels).filter((name) => name.endsWith(".whl"));
  if (!wheel) throw new Error(`pip wheel built nothing from ${source}`);
  return path.join(wheels, wheel);
}

function purelib(python) {
  return run(python, ["-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).trim();
}

/**
 * A venv at `dir` with `wheel` pip-installed, dependencies and all; returns its bin/ folder. Run
 * from `dir`, so nothing of the checkout is on sys.path.
 */
export function venvWithWheel(dir, wheel) {
  const began = Date.now();
  run(BASE_PYTHON, ["-m", "venv", dir]);
  const python = path.join(dir, "bin/python");
  run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel], { cwd: dir });
  log(
    `venv ${dir}: ${path.basename(wheel)} and its dependencies (${((Date.now() - began) / 1000).toFixed(1)} s)`,
  );
  return path.join(dir, "bin");
}

/**
 * A venv at `dir` with `wheel` installed alone, its dependencies those of the venv whose bin/ is
 * `sharing` (a .pth file puts that venv's site-packages after this one's, so this smartctx is the
 * one imported): another version of the server without another minute of pip. Returns its bin/.
 */
export function venvSharingDependencies(dir, wheel, sharing) {
  run(BASE_PYTHON, ["-m", "venv", "--without-pip", dir]);
  const python = path.join(dir, "bin/python");
  run(
    path.join(sharing, "python"),
    [
      "-m",
      "pip",
      "--python",
      python,
      "install",
      "--quiet",
      "--disable-pip-version-check",
      "--no-deps",
      wheel,
    ],
    { cwd: dir },
  );
  fs.writeFileSync(
    path.join(purelib(python), "e2e-shared-dependencies.pth"),
    `${purelib(path.join(sharing, "python"))}\n`,
  );
  const installed = run(python, ["-c", "import importlib.metadata as m; print(m.version('smartctx'))"], {
    cwd: dir,
  }).trim();
  if (installed !== wheelVersion(wheel))
    throw new Error(`${dir} imports smartctx ${installed}, not the ${wheelVersion(wheel)} it was given`);
  return path.join(dir, "bin");
}

/**
 * The next release of the extension in `vsix`: the same extension, its version one patch higher,
 * carrying `wheel` instead of its own; written into `dir`, returns its path.
 */
export async function nextExtensionRelease(vsix, wheel, dir) {
  const folder = path.join(dir, "extension");
  const script = [
    "import pathlib, sys, zipfile",
    "archive, target = zipfile.ZipFile(sys.argv[1]), pathlib.Path(sys.argv[2])",
    "for info in archive.infolist():",
    "    name = pathlib.PurePosixPath(info.filename)",
    "    if name.parts[0] == 'extension' and not info.is_dir():",
    "        out = target.joinpath(*name.parts[1:])",
    "        out.parent.mkdir(parents=True, exist_ok=True)",
    "        out.write_bytes(archive.read(info))",
  ].join("\n");
  run(PYTHON, ["-c", script, vsix, folder]);
  const bundled = path.join(folder, "bundled");
  for (const old of fs.readdirSync(bundled)) fs.rmSync(path.join(bundled, old));
  fs.copyFileSync(wheel, path.join(bundled, path.basename(wheel)));
  const manifest = path.join(folder, "package.json");
  const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"));
  const [major, minor, patch] = pkg.version.split(".").map(Number);
  pkg.version = `${major}.${minor}.${patch + 1}`;
  fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2));
  return packageExtension(folder, path.join(dir, "vsix"));
}
