// "Install the Server into a Private Environment": a virtual environment in the extension's global
// storage, with smartctx installed by pip from the wheel packaged with the extension. The server
// then starts from it (launch.ts puts it after the Python extension's interpreter).
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import * as vscode from "vscode";
import type { Server } from "./server";

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
