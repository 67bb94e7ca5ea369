// Starting, restarting and talking to the language server. The launch decision is launch.ts's; this
// file gathers its inputs, offers the fixes when smartctx is missing, restarts on launch-setting
// changes (debounced) and stops restarting a server that keeps crashing.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import * as path from "node:path";
import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";
import { LAUNCH_SETTINGS, launchSettings, wireSettings, type SettingsReader } from "./config";
import {
  decideLaunch,
  mayRestart,
  missingMessage,
  pythonCandidates,
  type LaunchDecision,
  type PythonCandidate,
} from "./launch";
import * as ext from "./lsp_ext";

// The languages the server indexes (server/smartctx/parsing/languages.py), as VS Code names them:
// only their buffers are sent and only they get hovers.
const DOCUMENT_LANGUAGES = [
  "python",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
  "go",
  "rust",
  "java",
  "c",
  "cpp",
  "csharp",
  "ruby",
  "php",
  "kotlin",
  "scala",
  "shellscript",
  "lua",
];

const RESTART_DEBOUNCE_MS = 500;
const PROBE_TIMEOUT_MS = 15_000;
const PYTHON_EXTENSION_ID = "ms-python.python";

export type ServerState =
  | { kind: "starting"; description: string }
  | { kind: "running"; description: string }
  | { kind: "missing"; message: string }
  | { kind: "stopped"; message: string };

export class ServerNotRunningError extends Error {}

// The client logs its errors to the output channel without notifications of its own: this class
// says what failed, once, with actions (giveUp, offerFixes).
class QuietLanguageClient extends lc.LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export function settingsReader(): SettingsReader {
  const config = vscode.workspace.getConfiguration(ext.CONFIGURATION_SECTION);
  return {
    get: (name: string) => config.get<unknown>(name),
    isSet: (name: string) => {
      const inspected = config.inspect(name);
      return (
        inspected?.globalValue !== undefined ||
        inspected?.workspaceValue !== undefined ||
        inspected?.workspaceFolderValue !== undefined
      );
    },
  };
}

// `python -m smartctx` and `python -c` put the working folder first on sys.path: run in the
// extension's own storage folder, never in the workspace, so a `smartctx/` folder in a repository
// cannot stand in for the installed server (or run its code when the folder is opened).
function hasSmartctx(python: string, cwd: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import smartctx"], { timeout: PROBE_TIMEOUT_MS, cwd }, (error) => {
      resolve(error === null);
    });
  });
}

export class Server implements vscode.Disposable {
  private client: lc.LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartTimes: number[] = [];
  private stopping = false;
  private pythonApi: PythonExtension | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly statusEmitter = new vscode.EventEmitter<ext.IndexStatus>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onDidChangeIndexStatus = this.statusEmitter.event;
  state: ServerState = { kind: "stopped", message: "not started" };
  lastIndexStatus: ext.IndexStatus | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      this.stateEmitter,
      this.statusEmitter,
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (LAUNCH_SETTINGS.some((name) => event.affectsConfiguration(name))) {
          this.scheduleRestart("a launch setting changed");
        } else if (event.affectsConfiguration(ext.CONFIGURATION_SECTION)) {
          void this.client?.sendNotification(lc.DidChangeConfigurationNotification.type, {
            settings: wireSettings(settingsReader()),
          });
        }
      }),
    );
  }

  get privateEnvironment(): string {
    return path.join(this.context.globalStorageUri.fsPath, "venv");
  }

  get privateEnvironmentPython(): string {
    return path.join(
      this.privateEnvironment,
      process.platform === "win32" ? "Scripts/python.exe" : "bin/python",
    );
  }

  private privatePython(): string | undefined {
    return existsSync(this.privateEnvironmentPython) ? this.privateEnvironmentPython : undefined;
  }

  // The working folder of every Python the extension starts (see hasSmartctx).
  private safeFolder(): string {
    const folder = this.context.globalStorageUri.fsPath;
    mkdirSync(folder, { recursive: true });
    return folder;
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }

  // The Python extension's interpreter for the first workspace folder, when it is installed.
  private async pythonExtensionInterpreter(): Promise<string | undefined> {
    if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return undefined;
    try {
      if (!this.pythonApi) {
        this.pythonApi = await PythonExtension.api();
        this.disposables.push(
          this.pythonApi.environments.onDidChangeActiveEnvironmentPath(() => {
            if (!launchSettings(settingsReader()).python)
              this.scheduleRestart("the Python interpreter changed");
          }),
        );
      }
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const active = this.pythonApi.environments.getActiveEnvironmentPath(folder);
      const resolved = await this.pythonApi.environments.resolveEnvironment(active);
      return resolved?.executable.uri?.fsPath;
    } catch (error) {
      this.log.warn(`could not ask the Python extension for its interpreter: ${String(error)}`);
      return undefined;
    }
  }

  async decide(): Promise<LaunchDecision> {
    const settings = launchSettings(settingsReader());
    if (settings.command.length > 0) return decideLaunch(settings, []);
    const candidates = pythonCandidates(
      settings,
      await this.pythonExtensionInterpreter(),
      this.privatePython(),
    );
    const probed: PythonCandidate[] = [];
    // In order, stopping at the first that has smartctx: each probe starts an interpreter.
    for (const candidate of candidates) {
      const found = await hasSmartctx(candidate.python, this.safeFolder());
      probed.push({ ...candidate, hasSmartctx: found });
      if (found) break;
    }
    return decideLaunch(settings, probed);
  }

  start(): Promise<void> {
    this.starting ??= this.startClient().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startClient(): Promise<void> {
    this.setState({ kind: "starting", description: "looking for smartctx" });
    const decision = await this.decide();
    if (decision.kind === "missing") {
      const message = missingMessage(decision);
      this.log.error(message);
      this.setState({ kind: "missing", message });
      void this.offerFixes(message);
      return;
    }
    this.log.info(`starting the server: ${decision.description}`);
    this.setState({ kind: "starting", description: decision.description });
    const serverOptions: lc.ServerOptions = {
      command: decision.command,
      args: decision.args,
      options: { cwd: this.safeFolder(), env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: lc.LanguageClientOptions = {
      documentSelector: DOCUMENT_LANGUAGES.map((language) => ({ scheme: "file", language })),
      outputChannel: this.log,
      revealOutputChannelOn: lc.RevealOutputChannelOn.Never,
      initializationOptions: wireSettings(settingsReader()),
      errorHandler: {
        error: () => ({ action: lc.ErrorAction.Continue }),
        closed: () => this.onClosed(client),
      },
      // Every restart is this class's (crashed): the client's own retries of a server that dies
      // during initialize are not seen by the error handler and show their own errors.
      initializationFailedHandler: () => false,
      middleware: {
        // The server's hover carries one command link, smartctx.contextForSymbol: trust exactly that
        // command, nothing else (the server escapes repository text, so it adds no links of its own).
        provideHover: async (document, position, token, next) => {
          const hover = await next(document, position, token);
          for (const content of hover?.contents ?? []) {
            if (content instanceof vscode.MarkdownString) {
              content.isTrusted = { enabledCommands: [ext.CONTEXT_FOR_SYMBOL_COMMAND] };
            }
          }
          return hover;
        },
      },
    };
    const client = new QuietLanguageClient("smartctx", "SmartCtx", serverOptions, clientOptions);
    this.client = client;
    this.lastIndexStatus = undefined;
    client.onNotification(ext.indexStatusNotification, (status) => {
      this.lastIndexStatus = status;
      this.statusEmitter.fire(status);
    });
    try {
      await client.start();
    } catch (error) {
      this.log.error(`the server did not start: ${String(error)}`);
      if (this.client === client) {
        this.client = undefined;
        this.crashed();
      }
      return;
    }
    // start() also resolves when initialize failed and the client gave up (onClosed has seen it).
    if (this.client === client && client.isRunning()) {
      this.setState({ kind: "running", description: decision.description });
    }
  }

  // The server exited while in use, or before it answered initialize: start a new one after a
  // pause that grows with each crash, until MAX_RESTARTS within RESTART_WINDOW_MS.
  private crashed(): void {
    const now = Date.now();
    if (!mayRestart(this.restartTimes, now)) {
      this.giveUp();
      return;
    }
    this.restartTimes.push(now);
    const pauseMs = 500 * this.restartTimes.length;
    this.log.warn(`restarting the server in ${pauseMs / 1000} s`);
    this.setState({ kind: "starting", description: "restarting after a crash" });
    this.scheduleStart(pauseMs);
  }

  private onClosed(client: lc.LanguageClient): lc.CloseHandlerResult {
    if (!this.stopping && this.client === client) {
      this.log.warn("the server stopped unexpectedly");
      this.client = undefined;
      this.crashed();
    }
    return { action: lc.CloseAction.DoNotRestart, handled: true };
  }

  private giveUp(): void {
    const message =
      "SmartCtx: the server stopped 5 times in 3 minutes and is not restarted. " +
      "The log says why; fix the cause, then restart it.";
    this.setState({ kind: "stopped", message });
    void vscode.window.showErrorMessage(message, "Show Log", "Restart Server", "Settings").then((choice) => {
      if (choice === "Show Log") this.log.show();
      if (choice === "Restart Server") void this.restart("restart requested");
      if (choice === "Settings")
        void vscode.commands.executeCommand("workbench.action.openSettings", "smartctx.server");
    });
  }

  private async offerFixes(message: string): Promise<void> {
    const install = "Install the Server";
    const pick = "Select Interpreter";
    const choice = await vscode.window.showErrorMessage(message, install, pick, "Settings");
    if (choice === install) await vscode.commands.executeCommand("smartctx.installServer");
    if (choice === pick) await this.pickInterpreter();
    if (choice === "Settings")
      await vscode.commands.executeCommand("workbench.action.openSettings", "smartctx.server");
  }

  private async pickInterpreter(): Promise<void> {
    if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
      await vscode.commands.executeCommand("python.setInterpreter");
      return;
    }
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      openLabel: "Use this Python for SmartCtx",
    });
    const python = picked?.[0]?.fsPath;
    if (python) {
      await vscode.workspace
        .getConfiguration(ext.CONFIGURATION_SECTION)
        .update("server.python", python, vscode.ConfigurationTarget.Global);
    }
  }

  // What pip installs into the private environment: the wheel packaged with the extension, or,
  // when the extension runs from a smartctx checkout, that checkout.
  installTarget(): string | undefined {
    const bundled = path.join(this.context.extensionPath, "bundled");
    if (existsSync(bundled)) {
      const wheel = readdirSync(bundled).find((name) => name.endsWith(".whl"));
      if (wheel) return path.join(bundled, wheel);
    }
    const checkout = path.dirname(this.context.extensionPath);
    return existsSync(path.join(checkout, "pyproject.toml")) ? checkout : undefined;
  }

  // Restarts once the launch settings have stopped changing for RESTART_DEBOUNCE_MS.
  scheduleRestart(reason: string): void {
    this.setTimer(() => this.restart(reason), RESTART_DEBOUNCE_MS);
  }

  private scheduleStart(delayMs: number): void {
    this.setTimer(() => this.start(), delayMs);
  }

  // One pending (re)start at a time: a newer one replaces it.
  private setTimer(run: () => Promise<void>, delayMs: number): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void run();
    }, delayMs);
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`restarting the server: ${reason}`);
    await this.stop();
    this.restartTimes = [];
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.isRunning()) await client.stop();
    } catch (error) {
      this.log.warn(`the server did not stop cleanly: ${String(error)}`);
    } finally {
      this.stopping = false;
      this.setState({ kind: "stopped", message: "stopped" });
    }
  }

  // The running client, once started; a clear error when there is none.
  async running(): Promise<lc.LanguageClient> {
    if (this.starting) await this.starting;
    const client = this.client;
    if (client?.isRunning()) return client;
    const reason =
      this.state.kind === "missing" || this.state.kind === "stopped" ? this.state.message : "it is starting";
    throw new ServerNotRunningError(`SmartCtx: the server is not running (${reason}).`);
  }

  async contextForTask(
    params: ext.ContextForTaskParams,
    token?: vscode.CancellationToken,
  ): Promise<ext.WireContextPack> {
    return (await this.running()).sendRequest(ext.contextForTask, params, token);
  }

  async expand(id: string, token?: vscode.CancellationToken): Promise<ext.WireNode> {
    return (await this.running()).sendRequest(ext.expand, { id }, token);
  }

  async indexStatus(): Promise<ext.IndexStatus> {
    return (await this.running()).sendRequest(ext.indexStatusRequest);
  }

  async reindex(): Promise<ext.ReindexResult> {
    const client = await this.running();
    return (await client.sendRequest(lc.ExecuteCommandRequest.type, {
      command: ext.REINDEX_COMMAND,
      arguments: [],
    })) as ext.ReindexResult;
  }

  dispose(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    void this.stop();
    for (const disposable of this.disposables) disposable.dispose();
  }
}
