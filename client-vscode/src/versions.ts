// Whether the server that runs fits this extension: the protocol it speaks (a requirement: a server
// too old for the client is stopped with an error) and its smartctx version against the wheel the
// .vsix carries (a question for the user: Update the Server or Use It Anyway, remembered). Pure, for
// tests; server.ts gathers the facts and acts on the answers.
import { compare, valid } from "@renovatebot/pep440";
import { PROTOCOL_VERSION } from "./lsp_ext";

// The wheel packaged in bundled/ (build-wheel.mjs), by its file name and content.
export interface CarriedWheel {
  path: string;
  file: string;
  version: string;
  sha256: string;
}

// What the private environment was last installed from (install.ts writes it there).
export interface InstalledWheel {
  file: string;
  sha256: string;
}

// The user's answer to a version notification, for one launch (an interpreter or a command) at one
// smartctx version.
export type VersionChoice = "use-anyway" | "update";
export type VersionChoices = Readonly<Record<string, VersionChoice>>;

// PEP 427 names a wheel {distribution}-{version}(-{build tag})?-{python}-{abi}-{platform}.whl, and
// its version never holds a "-".
const WHEEL_NAME = /^smartctx-([^-]+)-(?:[^-]+-)?[^-]+-[^-]+-[^-]+\.whl$/;

export function wheelVersion(fileName: string): string | undefined {
  return WHEEL_NAME.exec(fileName)?.[1];
}

export type Relation = "same" | "older" | "newer" | "different";

// How a server's version stands to the carried one, by PEP 440 (0.1 is 0.1.0); "different" when
// either is not a version PEP 440 can order.
export function relation(version: string | undefined, carried: string): Relation {
  if (version === carried) return "same";
  if (version === undefined || !valid(version) || !valid(carried)) return "different";
  const order = compare(version, carried);
  return order < 0 ? "older" : order > 0 ? "newer" : "same";
}

// capabilities.experimental.smartctx.protocolVersion of an initialize result: 0 when it is absent
// (every server before the number existed) or not a whole number.
export function serverProtocolVersion(experimental: unknown): number {
  const entry = (experimental as { smartctx?: { protocolVersion?: unknown } } | null | undefined)?.smartctx;
  const version = entry?.protocolVersion;
  return typeof version === "number" && Number.isInteger(version) && version >= 0 ? version : 0;
}

// The key a choice is remembered under: the launch and the version it was made for, so a new version
// of the same server asks again.
export function choiceKey(launch: string, version: string | undefined): string {
  return `${launch}\u0000${version ?? ""}`;
}

// The private environment is installed again from the carried wheel when it holds anything else:
// another version, another build of the same version (an updated extension), or a wheel it has no
// record of (installed before records were kept).
export function privateEnvironmentIsCurrent(
  installed: InstalledWheel | undefined,
  carried: CarriedWheel | undefined,
): boolean {
  return carried === undefined || installed?.sha256 === carried.sha256;
}

export interface RunningServer {
  // serverInfo.version of the initialize result.
  version: string | undefined;
  protocolVersion: number;
  // The launch, for choiceKey: the interpreter, or the whole command line.
  launch: string;
  // Where it was found, for messages: "python3 (python3 on the PATH)".
  where: string;
  // Started from smartctx.server.command, which Update the Server cannot replace.
  fromCommand: boolean;
  // The server it runs in place of (the private environment, after Update the Server).
  replaces?: { version: string | undefined; where: string };
}

export type ServerCheck =
  // `detail` names the server for the status bar's tooltip.
  | { kind: "ok"; detail: string }
  // A version that differs, but the user chose Use It Anyway for it.
  | { kind: "accepted"; detail: string }
  // A version that differs and has no answer yet: the tooltip shows `message` and a notification
  // asks; `canUpdate` says whether Update the Server can replace it.
  | { kind: "mismatch"; message: string; canUpdate: boolean }
  // Too old for this client: the server is stopped and `message` says why.
  | { kind: "too-old"; message: string; canUpdate: boolean };

function named(version: string | undefined): string {
  return version === undefined ? "a smartctx of unknown version" : `smartctx ${version}`;
}

const RELATION_WORDS: Record<Exclude<Relation, "same">, string> = {
  older: "older than",
  newer: "newer than",
  different: "not",
};

// `carried` is undefined when the extension carries no wheel (it runs from a checkout): then only
// the protocol is checked.
export function checkServer(
  server: RunningServer,
  carried: string | undefined,
  choices: VersionChoices,
): ServerCheck {
  const canUpdate = carried !== undefined && !server.fromCommand;
  if (server.protocolVersion < PROTOCOL_VERSION) {
    return {
      kind: "too-old",
      canUpdate,
      message:
        `SmartCtx: ${named(server.version)} in ${server.where} speaks protocol ${server.protocolVersion}; ` +
        `this extension needs protocol ${PROTOCOL_VERSION} or later, so the server was stopped. ` +
        (canUpdate
          ? `Update the Server installs smartctx ${carried} into SmartCtx's private environment and uses it.`
          : "Install a newer smartctx there, or change smartctx.server.command."),
    };
  }
  const instead = server.replaces
    ? `, in place of ${named(server.replaces.version)} in ${server.replaces.where} (Update the Server)`
    : "";
  const detail = `Server: ${named(server.version)}, ${server.where}${instead}.`;
  if (carried === undefined) return { kind: "ok", detail };
  const found = relation(server.version, carried);
  if (found === "same") return { kind: "ok", detail };
  const differs = `${named(server.version)} in ${server.where} is ${RELATION_WORDS[found]} the smartctx ${carried} this extension carries`;
  if (choices[choiceKey(server.launch, server.version)] === "use-anyway") {
    return { kind: "accepted", detail: `Server: ${differs} (Use It Anyway).` };
  }
  return {
    kind: "mismatch",
    canUpdate,
    message:
      `SmartCtx: ${differs}. ` +
      (canUpdate
        ? `Update the Server installs ${carried} into SmartCtx's private environment and uses it instead.`
        : "Change smartctx.server.command to start that version, or use this one anyway."),
  };
}
