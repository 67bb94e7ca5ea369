// Starting, restarting and talking to the language server. The launch decision is launch.ts's and
// the version checks are versions.ts's; this file gathers their inputs, offers the fixes when
// smartctx is missing or of another version, keeps the private environment at the carried wheel,
// restarts on launch-setting changes (debounced) and stops restarting a server that keeps crashing.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";
import { LAUNCH_SETTINGS, launchSettings, wireSettings, type SettingsReader } from "./config";
import { installedWheel, updateServer, upgradePrivateEnvironment } from "./install";
import {
  decideLaunch,
  mayRestart,
  missingMessage,
  pythonCandidates,
  wantsStandIn,
  where,
  type LaunchDecision,
  type PythonCandidate,
} from "./launch";
import * as ext from "./lsp_ext";
import {
  checkServer,
  choiceKey,
  privateEnvironmentIsCurrent,
  serverProtocolVersion,
  wheelVersion,
  type CarriedWheel,
  type RunningServer,
  type VersionChoice,
  type VersionChoices,
} from "./versions";

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
const VERSION_CHOICES_KEY = "smartctx.serverVersionChoices";
const UPDATE_THE_SERVER = "Update the Server";
const USE_IT_ANYWAY = "Use It Anyway";

type Launch = Exclude<LaunchDecision, { kind: "missing" }>;

export type ServerState =
  | { kind: "starting"; description: string }
  // `detail` names the server for the tooltip; `warning` says that its version is not the carried one.
  | { kind: "running"; description: string; detail?: string; warning?: string }
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

// Imports smartctx and prints its installed version, as the server reads it at start-up.
const PROBE = "import smartctx, importlib.metadata as m; print(m.version('smartctx'))";

// `python -m smartctx` and `python -c` put the working folder first on sys.path: run in the
// extension's own storage folder, never in the workspace, so a `smartctx/` folder in a repository
// cannot stand in for the installed server (or run its code when the folder is opened).
function probe(
  candidate: { python: string; source: PythonCandidate["source"] },
  cwd: string,
): Promise<PythonCandidate> {
  return new Promise((resolve) => {
    execFile(candidate.python, ["-c", PROBE], { timeout: PROBE_TIMEOUT_MS, cwd }, (error, stdout) => {
      const version = stdout.trim();
      resolve(
        error === null && version
          ? { ...candidate, hasSmartctx: true, version }
          : { ...candidate, hasSmartctx: false },
      );
    });
  });
}

// The wheel in the extension's bundled/ folder, if it carries one.
function findCarriedWheel(extensionPath: string): CarriedWheel | undefined {
  const bundled = path.join(extensionPath, "bundled");
  if (!existsSync(bundled)) return undefined;
  for (const file of readdirSync(bundled)) {
    const version = wheelVersion(file);
    if (version === undefined) continue;
    const wheelPath = path.join(bundled, file);
    const sha256 = createHash("sha256").update(readFileSync(wheelPath)).digest("hex");
    return { path: wheelPath, file, version, sha256 };
  }
  return undefined;
}

export class Server implements vscode.Disposable {
  private client: lc.LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartTimes: number[] = [];
  private stopping = false;
  private upgradeTried = false;
  private pythonApi: PythonExtension | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly statusEmitter = new vscode.EventEmitter<ext.IndexStatus>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onDidChangeIndexStatus = this.statusEmitter.event;
  state: ServerState = { kind: "stopped", message: "not started" };
  lastIndexStatus: ext.IndexStatus | undefined;
  // The wheel this extension carries, read once: versions are compared with it.
  readonly carried: CarriedWheel | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.carried = findCarriedWheel(context.extensionPath);
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

  private versionChoices(): VersionChoices {
    return this.context.globalState.get<VersionChoices>(VERSION_CHOICES_KEY, {});
  }

  private async rememberChoice(key: string, choice: VersionChoice): Promise<void> {
    await this.context.globalState.update(VERSION_CHOICES_KEY, { ...this.versionChoices(), [key]: choice });
  }

  private privateEnvironmentCurrent(): boolean {
    return privateEnvironmentIsCurrent(installedWheel(this.privateEnvironment), this.carried);
  }

  async decide(): Promise<LaunchDecision> {
    const settings = launchSettings(settingsReader());
    if (settings.command.length > 0) return decideLaunch(settings, []);
    const privatePython = this.privatePython();
    const candidates = pythonCandidates(settings, await this.pythonExtensionInterpreter(), privatePython);
    const probed: PythonCandidate[] = [];
    // In order, stopping at the first that has smartctx: each probe starts an interpreter.
    for (const candidate of candidates) {
      const found = await probe(candidate, this.safeFolder());
      this.logProbe(found);
      probed.push(found);
      if (found.hasSmartctx) break;
    }
    const versions = {
      choices: this.versionChoices(),
      privateEnvironmentCurrent: this.privateEnvironmentCurrent(),
    };
    const usable = probed.find((candidate) => candidate.hasSmartctx);
    if (
      usable &&
      privatePython &&
      wantsStandIn(usable, versions.choices) &&
      !probed.some((candidate) => candidate.source === "private-environment")
    ) {
      const found = await probe({ python: privatePython, source: "private-environment" }, this.safeFolder());
      this.logProbe(found);
      probed.push(found);
    }
    return decideLaunch(settings, probed, versions);
  }

  private logProbe(candidate: PythonCandidate): void {
    this.log.info(
      `${where(candidate)}: ${candidate.hasSmartctx ? `smartctx ${candidate.version ?? "?"}` : "no smartctx"}`,
    );
  }

  // An updated extension carries another wheel: the private environment gets it before it is used
  // (tried once per session: a failure is shown, and restarts do not repeat it).
  private async keepPrivateEnvironmentCurrent(): Promise<void> {
    if (this.upgradeTried || !this.privatePython() || this.privateEnvironmentCurrent()) return;
    this.upgradeTried = true;
    this.setState({ kind: "starting", description: "updating the server in the private environment" });
    try {
      await upgradePrivateEnvironment(this, "the extension was updated");
    } catch (error) {
      const message = `SmartCtx: the private environment could not be updated to the extension's server (${
        error instanceof Error ? error.message : String(error)
      }).`;
      this.log.error(message);
      void vscode.window.showErrorMessage(message, "Show Log").then((choice) => {
        if (choice === "Show Log") this.log.show();
      });
    }
  }

  start(): Promise<void> {
    this.starting ??= this.startClient().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startClient(): Promise<void> {
    await this.keepPrivateEnvironmentCurrent();
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
      await this.checkVersions(client, decision);
    }
  }

  private runningServer(client: lc.LanguageClient, decision: Launch): RunningServer {
    const result = client.initializeResult;
    const replaces = decision.kind === "python" ? decision.replaces : undefined;
    return {
      version: result?.serverInfo?.version,
      protocolVersion: serverProtocolVersion(result?.capabilities.experimental),
      launch: decision.launch,
      where: decision.where,
      fromCommand: decision.kind === "command",
      ...(replaces ? { replaces: { version: replaces.version, where: where(replaces) } } : {}),
    };
  }

  // The running server against the protocol this client needs and the wheel it carries.
  private async checkVersions(client: lc.LanguageClient, decision: Launch): Promise<void> {
    const running = this.runningServer(client, decision);
    const check = checkServer(running, this.carried?.version, this.versionChoices());
    const key = choiceKey(running.launch, running.version);
    if (check.kind === "too-old") {
      this.log.error(check.message);
      await this.stop();
      this.setState({ kind: "stopped", message: check.message });
      const actions = check.canUpdate ? [UPDATE_THE_SERVER, "Show Log"] : ["Show Log", "Settings"];
      void vscode.window
        .showErrorMessage(check.message, ...actions)
        .then((choice) => this.onChoice(choice, key));
      return;
    }
    if (check.kind === "mismatch") {
      this.log.warn(check.message);
      this.setState({ kind: "running", description: decision.description, warning: check.message });
      const actions = check.canUpdate ? [UPDATE_THE_SERVER, USE_IT_ANYWAY] : [USE_IT_ANYWAY, "Settings"];
      void vscode.window.showWarningMessage(check.message, ...actions).then(async (choice) => {
        await this.onChoice(choice, key);
        if (choice === USE_IT_ANYWAY && this.client === client) {
          const accepted = checkServer(running, this.carried?.version, this.versionChoices());
          if (accepted.kind === "accepted")
            this.setState({ kind: "running", description: decision.description, detail: accepted.detail });
        }
      });
      return;
    }
    this.setState({ kind: "running", description: decision.description, detail: check.detail });
  }

  private async onChoice(choice: string | undefined, key: string): Promise<void> {
    if (choice === USE_IT_ANYWAY) await this.rememberChoice(key, "use-anyway");
    if (choice === UPDATE_THE_SERVER) {
      await this.rememberChoice(key, "update");
      await updateServer(this).catch((error: unknown) => {
        const message = `SmartCtx: the server could not be updated (${error instanceof Error ? error.message : String(error)}).`;
        this.log.error(message);
        void vscode.window.showErrorMessage(message, "Show Log").then((picked) => {
          if (picked === "Show Log") this.log.show();
        });
      });
    }
    if (choice === "Show Log") this.log.show();
    if (choice === "Settings")
      await vscode.commands.executeCommand("workbench.action.openSettings", "smartctx.server");
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
    if (this.carried) return this.carried.path;
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
