// How the language server starts: the decision, as a pure function over what was found, so every
// row of the table is unit-tested. server.ts gathers the inputs (settings, the Python extension's
// interpreter, the private environment, probes) and acts on the answer.
import type { ServerLaunchSettings } from "./config";

export type PythonSource = "setting" | "python-extension" | "private-environment" | "path";

export interface PythonCandidate {
  python: string;
  source: PythonSource;
  // Whether `python -c "import smartctx"` succeeded; undefined when not probed.
  hasSmartctx: boolean | undefined;
}

export type LaunchDecision =
  | { kind: "command"; command: string; args: string[]; description: string }
  | { kind: "python"; command: string; args: string[]; source: PythonSource; description: string }
  | { kind: "missing"; tried: PythonCandidate[]; explicit: boolean };

export const SERVE_ARGS = ["-m", "smartctx", "serve"];

const SOURCE_NAMES: Record<PythonSource, string> = {
  setting: "smartctx.server.python",
  "python-extension": "the Python extension's interpreter",
  "private-environment": "SmartCtx's private environment",
  path: "python3 on the PATH",
};

export function describeSource(source: PythonSource): string {
  return SOURCE_NAMES[source];
}

// The interpreters worth probing, in the order they are preferred. An explicit
// smartctx.server.python is the only one tried when set: the user chose it.
export function pythonCandidates(
  settings: ServerLaunchSettings,
  pythonExtension: string | undefined,
  privateEnvironment: string | undefined,
): { python: string; source: PythonSource }[] {
  if (settings.python) return [{ python: settings.python, source: "setting" }];
  const found: { python: string; source: PythonSource }[] = [];
  if (pythonExtension) found.push({ python: pythonExtension, source: "python-extension" });
  if (privateEnvironment) found.push({ python: privateEnvironment, source: "private-environment" });
  found.push({ python: "python3", source: "path" });
  return found;
}

// smartctx.server.command wins; else the first probed interpreter that has smartctx; else
// "missing", with what was tried so the message can name it.
export function decideLaunch(settings: ServerLaunchSettings, probed: PythonCandidate[]): LaunchDecision {
  const [command, ...args] = settings.command;
  if (command) {
    return {
      kind: "command",
      command,
      args,
      description: `${settings.command.join(" ")} (smartctx.server.command)`,
    };
  }
  const usable = probed.find((candidate) => candidate.hasSmartctx === true);
  if (usable) {
    return {
      kind: "python",
      command: usable.python,
      args: SERVE_ARGS,
      source: usable.source,
      description: `${usable.python} -m smartctx serve (${describeSource(usable.source)})`,
    };
  }
  return { kind: "missing", tried: probed, explicit: settings.python !== "" };
}

// What the "smartctx is missing" notification says.
export function missingMessage(decision: { tried: PythonCandidate[]; explicit: boolean }): string {
  const names = decision.tried.map(
    (candidate) => `${candidate.python} (${describeSource(candidate.source)})`,
  );
  const where = names.length === 1 ? names[0] : `any of ${names.join(", ")}`;
  return (
    `SmartCtx: the Python package smartctx is not installed in ${where}. ` +
    "Install it into a private environment, or pick an interpreter that has it."
  );
}

// Crash-loop protection: the server may restart this many times within the window before the
// extension stops restarting it and asks the user.
export const MAX_RESTARTS = 4;
export const RESTART_WINDOW_MS = 3 * 60 * 1000;

// Whether another restart is allowed, given the times (ms) of the earlier ones.
export function mayRestart(restartTimes: readonly number[], now: number): boolean {
  return restartTimes.filter((time) => now - time < RESTART_WINDOW_MS).length < MAX_RESTARTS;
}
