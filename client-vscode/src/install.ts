// "Install the Server into a Private Environment": a virtual environment in the extension's global
// storage, with smartctx installed by pip from the wheel packaged with the extension. The server
// then starts from it (launch.ts puts it after the Python extension's interpreter). The environment
// keeps a record of the wheel it was installed from, so that an updated extension (another wheel)
// installs its own again (server.ts), as does Update the Server.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import * as vscode from "vscode";
import type { Server } from "./server";
import { privateEnvironmentIsCurrent, type CarriedWheel, type InstalledWheel } from "./versions";

const RECORD_FILE = "smartctx-wheel.json";

function run(
  command: string,
  args: string[],
  log: vscode.LogOutputChannel,
  token: vscode.CancellationToken,
): Promise<void> {
  return new Promise((resolve, reject) => {
    log.info(`$ ${command} ${args.join(" ")}`);
    const child = spawn(command, args, { env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } });
    const cancel = token.onCancellationRequested(() => child.kill());
    child.stdout.on("data", (data: Buffer) => {
      log.info(data.toString().trimEnd());
    });
    child.stderr.on("data", (data: Buffer) => {
      log.warn(data.toString().trimEnd());
    });
    child.on("error", (error) => {
      cancel.dispose();
      reject(new Error(`${command} could not be run: ${error.message}`));
    });
    child.on("close", (code) => {
      cancel.dispose();
      if (token.isCancellationRequested) reject(new vscode.CancellationError());
      else if (code === 0) resolve();
      else
        reject(
          new Error(
            `${command} ${args.slice(0, 3).join(" ")} failed (exit code ${String(code)}); the log has its output`,
          ),
        );
    });
  });
}

// The wheel the private environment was installed from; undefined without a readable record.
export function installedWheel(environment: string): InstalledWheel | undefined {
  try {
    const record = JSON.parse(
      readFileSync(path.join(environment, RECORD_FILE), "utf8"),
    ) as Partial<InstalledWheel>;
    return typeof record.file === "string" && typeof record.sha256 === "string"
      ? { file: record.file, sha256: record.sha256 }
      : undefined;
  } catch {
    return undefined;
  }
}

async function recordInstalledWheel(environment: string, wheel: CarriedWheel | undefined): Promise<void> {
  if (!wheel) return;
  const record: InstalledWheel = { file: wheel.file, sha256: wheel.sha256 };
  await writeFile(path.join(environment, RECORD_FILE), `${JSON.stringify(record)}\n`);
}

// Replaces the private environment's smartctx with the carried wheel, in place (its dependencies stay
// where they still fit): pip would keep an installed smartctx of the same version, hence the uninstall.
export async function upgradePrivateEnvironment(server: Server, reason: string): Promise<void> {
  const wheel = server.carried;
  if (!wheel) return;
  const python = server.privateEnvironmentPython;
  await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `SmartCtx: updating the server in the private environment to smartctx ${wheel.version} (${reason})`,
      cancellable: true,
    },
    async (_progress, token) => {
      await run(python, ["-m", "pip", "uninstall", "--quiet", "--yes", "smartctx"], server.log, token);
      await run(python, ["-m", "pip", "install", "--quiet", wheel.path], server.log, token);
    },
  );
  await recordInstalledWheel(server.privateEnvironment, wheel);
  server.log.info(`the private environment now has ${wheel.file}`);
}

// Update the Server: the private environment made current (installed first if there is none), then
// the server restarted, so that it runs in place of the one the user was asked about.
export async function updateServer(server: Server): Promise<void> {
  if (!existsSync(server.privateEnvironmentPython)) {
    await installPrivateEnvironment(server);
    return;
  }
  if (!privateEnvironmentIsCurrent(installedWheel(server.privateEnvironment), server.carried)) {
    await upgradePrivateEnvironment(server, "Update the Server");
  }
  await server.restart("Update the Server");
}

export async function installPrivateEnvironment(server: Server): Promise<void> {
  const target = server.installTarget();
  if (!target) {
    throw new Error(
      "this build of the extension carries no smartctx wheel; install smartctx with pip and set smartctx.server.python",
    );
  }
  const basePython = (
    await vscode.window.showInputBox({
      title: "SmartCtx: Install the Server",
      prompt: "The Python (3.10 or newer) to create the private environment with",
      value: process.platform === "win32" ? "python" : "python3",
      ignoreFocusOut: true,
    })
  )?.trim();
  if (!basePython) return;
  const environment = server.privateEnvironment;
  const python = server.privateEnvironmentPython;
  await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: "SmartCtx: installing the server",
      cancellable: true,
    },
    async (progress, token) => {
      try {
        progress.report({ message: "creating the environment…" });
        await rm(environment, { recursive: true, force: true });
        await run(basePython, ["-m", "venv", environment], server.log, token);
        progress.report({ message: "installing smartctx and its dependencies (pip)…" });
        await run(python, ["-m", "pip", "install", "--quiet", target], server.log, token);
        await recordInstalledWheel(environment, server.carried);
      } catch (error) {
        await rm(environment, { recursive: true, force: true });
        throw error;
      }
    },
  );
  void vscode.window.showInformationMessage(
    `SmartCtx: the server is installed in ${environment}; starting it.`,
  );
  await server.restart("installed into the private environment");
}
