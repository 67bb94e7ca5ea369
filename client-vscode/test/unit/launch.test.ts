// The server-launch decision table: which command starts the server, or why none can.
import { describe, expect, it } from "vitest";
import {
  decideLaunch,
  mayRestart,
  missingMessage,
  pythonCandidates,
  RESTART_WINDOW_MS,
  SERVE_ARGS,
  wantsStandIn,
  type PythonCandidate,
} from "../../src/launch";
import { choiceKey } from "../../src/versions";

const NONE = { command: [], python: "" };

function probed(
  candidates: { python: string; source: PythonCandidate["source"] }[],
  having: string[],
): PythonCandidate[] {
  return candidates.map((candidate) => ({ ...candidate, hasSmartctx: having.includes(candidate.python) }));
}

describe("pythonCandidates", () => {
  it.each([
    ["nothing set, nothing found", NONE, undefined, undefined, ["python3:path"]],
    [
      "the Python extension's interpreter first",
      NONE,
      "/proj/.venv/bin/python",
      "/g/venv/bin/python",
      ["/proj/.venv/bin/python:python-extension", "/g/venv/bin/python:private-environment", "python3:path"],
    ],
    [
      "an explicit interpreter alone",
      { command: [], python: "/opt/py" },
      "/proj/.venv/bin/python",
      "/g/venv/bin/python",
      ["/opt/py:setting"],
    ],
  ])("%s", (_case, settings, extension, privateEnvironment, expected) => {
    expect(
      pythonCandidates(settings, extension, privateEnvironment).map((c) => `${c.python}:${c.source}`),
    ).toEqual(expected);
  });
});

describe("decideLaunch", () => {
  it("runs smartctx.server.command as given, without probing", () => {
    expect(
      decideLaunch({ command: ["/opt/smartctx", "serve", "--tcp", "x"], python: "/opt/py" }, []),
    ).toMatchObject({
      kind: "command",
      command: "/opt/smartctx",
      args: ["serve", "--tcp", "x"],
    });
  });

  it("takes the first interpreter that has smartctx", () => {
    const candidates = pythonCandidates(NONE, "/proj/.venv/bin/python", "/g/venv/bin/python");
    expect(decideLaunch(NONE, probed(candidates, ["/g/venv/bin/python", "python3"]))).toMatchObject({
      kind: "python",
      command: "/g/venv/bin/python",
      args: SERVE_ARGS,
      source: "private-environment",
    });
  });

  it("says what was tried when none has it", () => {
    const candidates = pythonCandidates(NONE, "/proj/.venv/bin/python", undefined);
    const decision = decideLaunch(NONE, probed(candidates, []));
    expect(decision).toMatchObject({ kind: "missing", explicit: false });
    if (decision.kind !== "missing") throw new Error("expected missing");
    expect(missingMessage(decision)).toBe(
      "SmartCtx: the Python package smartctx is not installed in any of /proj/.venv/bin/python (the Python extension's interpreter), python3 (python3 on the PATH). Install it into a private environment, or pick an interpreter that has it.",
    );
  });

  it("names the explicit interpreter when it lacks smartctx", () => {
    const settings = { command: [], python: "/opt/py" };
    const decision = decideLaunch(settings, probed(pythonCandidates(settings, undefined, undefined), []));
    if (decision.kind !== "missing") throw new Error("expected missing");
    expect(decision.explicit).toBe(true);
    expect(missingMessage(decision)).toContain("not installed in /opt/py (smartctx.server.python)");
  });
});

describe("mayRestart", () => {
  it("allows four restarts within three minutes, then stops", () => {
    const now = 1_000_000;
    expect(mayRestart([now - 1000, now - 2000, now - 3000], now)).toBe(true);
    expect(mayRestart([now - 1000, now - 2000, now - 3000, now - 4000], now)).toBe(false);
    expect(mayRestart([now - RESTART_WINDOW_MS - 1, now - 2000, now - 3000, now - 4000], now)).toBe(true);
  });
});

describe("decideLaunch with version choices", () => {
  const pathServer = { python: "python3", source: "path", hasSmartctx: true, version: "0.0.9" } as const;
  const privateEnvironment = {
    python: "/g/venv/bin/python",
    source: "private-environment",
    hasSmartctx: true,
    version: "0.1.0",
  } as const;
  const updated = { [choiceKey("python3", "0.0.9")]: "update" } as const;

  it("runs the private environment in place of a server the user chose Update the Server for", () => {
    expect(wantsStandIn(pathServer, updated)).toBe(true);
    const decision = decideLaunch(NONE, [pathServer, privateEnvironment], {
      choices: updated,
      privateEnvironmentCurrent: true,
    });
    expect(decision).toMatchObject({
      kind: "python",
      command: "/g/venv/bin/python",
      source: "private-environment",
      launch: "/g/venv/bin/python",
      replaces: pathServer,
    });
  });

  it("keeps the server when the private environment is not current yet", () => {
    const decision = decideLaunch(NONE, [pathServer, privateEnvironment], {
      choices: updated,
      privateEnvironmentCurrent: false,
    });
    expect(decision).toMatchObject({ kind: "python", command: "python3" });
    expect(decision).not.toHaveProperty("replaces");
  });

  it("asks again for another version of that server", () => {
    expect(wantsStandIn({ ...pathServer, version: "0.0.8" }, updated)).toBe(false);
  });

  it("never stands in for the private environment itself", () => {
    const key = choiceKey("/g/venv/bin/python", "0.1.0");
    expect(wantsStandIn(privateEnvironment, { [key]: "update" })).toBe(false);
  });
});
