// How the language server starts: the decision, as a pure function over what was found, so every
// row of the table is unit-tested. server.ts gathers the inputs (settings, the Python extension's
// interpreter, the private environment, probes) and acts on the answer.
import type { ServerLaunchSettings } from "./config";
import { choiceKey, type VersionChoices } from "./versions";

export type PythonSource = "setting" | "python-extension" | "private-environment" | "path";

export interface PythonCandidate {
  python: string;
  source: PythonSource;
  // Whether smartctx could be imported (and its version read); undefined when not probed.
  hasSmartctx: boolean | undefined;
  // Its installed version, when it has smartctx.
  version?: string;
}

// `launch` is what a version choice is remembered for (choiceKey); `where` names it in messages.
export type LaunchDecision =
  | { kind: "command"; command: string; args: string[]; description: string; launch: string; where: string }
  | {
      kind: "python";
      command: string;
      args: string[];
      source: PythonSource;
      description: string;
      launch: string;
      where: string;
      // The interpreter the private environment runs in place of (Update the Server was chosen for it).
      replaces?: PythonCandidate;
    }
  | { kind: "missing"; tried: PythonCandidate[]; explicit: boolean };

// What the version choices say about launching: the remembered answers, and whether the private
// environment holds the wheel the extension carries (versions.ts privateEnvironmentIsCurrent).
export interface VersionState {
  choices: VersionChoices;
  privateEnvironmentCurrent: boolean;
}

const NO_CHOICES: VersionState = { choices: {}, privateEnvironmentCurrent: false };

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

// An interpreter as messages name it: "python3 (python3 on the PATH)".
export function where(candidate: { python: string; source: PythonSource }): string {
  return `${candidate.python} (${describeSource(candidate.source)})`;
}

// Whether the user chose Update the Server for this interpreter at this version: then the private
// environment runs instead, and server.ts probes it even when an earlier interpreter has smartctx.
export function wantsStandIn(usable: PythonCandidate, choices: VersionChoices): boolean {
  return (
    usable.source !== "private-environment" && choices[choiceKey(usable.python, usable.version)] === "update"
  );
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

// smartctx.server.command wins; else the first probed interpreter that has smartctx, or the private
// environment in its place when the user chose Update the Server for it and the private environment
// is current; else "missing", with what was tried so the message can name it.
export function decideLaunch(
  settings: ServerLaunchSettings,
  probed: PythonCandidate[],
  versions: VersionState = NO_CHOICES,
): LaunchDecision {
  const [command, ...args] = settings.command;
  if (command) {
    const line = settings.command.join(" ");
    return {
      kind: "command",
      command,
      args,
      description: `${line} (smartctx.server.command)`,
      launch: line,
      where: `smartctx.server.command (${line})`,
    };
  }
  const usable = probed.find((candidate) => candidate.hasSmartctx === true);
  if (usable) {
    const standIn =
      wantsStandIn(usable, versions.choices) && versions.privateEnvironmentCurrent
        ? probed.find((candidate) => candidate.source === "private-environment" && candidate.hasSmartctx)
        : undefined;
    const chosen = standIn ?? usable;
    return {
      kind: "python",
      command: chosen.python,
      args: SERVE_ARGS,
      source: chosen.source,
      description: `${chosen.python} -m smartctx serve (${describeSource(chosen.source)})`,
      launch: chosen.python,
      where: where(chosen),
      ...(standIn ? { replaces: usable } : {}),
    };
  }
  return { kind: "missing", tried: probed, explicit: settings.python !== "" };
}

// What the "smartctx is missing" notification says.
export function missingMessage(decision: { tried: PythonCandidate[]; explicit: boolean }): string {
  const names = decision.tried.map(where);
  const tried = names.length === 1 ? names[0] : `any of ${names.join(", ")}`;
  return (
    `SmartCtx: the Python package smartctx is not installed in ${tried}. ` +
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
