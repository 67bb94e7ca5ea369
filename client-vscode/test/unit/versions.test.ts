// The version checks: the protocol a server speaks, its smartctx version against the carried wheel,
// the user's remembered answers, and when the private environment is installed again.
import { describe, expect, it } from "vitest";
import { PROTOCOL_VERSION } from "../../src/lsp_ext";
import {
  checkServer,
  choiceKey,
  privateEnvironmentIsCurrent,
  relation,
  serverProtocolVersion,
  wheelVersion,
  type RunningServer,
} from "../../src/versions";

const PATH_SERVER: RunningServer = {
  version: "0.1.0",
  protocolVersion: PROTOCOL_VERSION,
  launch: "python3",
  where: "python3 (python3 on the PATH)",
  fromCommand: false,
};

describe("wheelVersion", () => {
  it.each([
    ["smartctx-0.1.0-py3-none-any.whl", "0.1.0"],
    ["smartctx-1.2.0rc1-1-py3-none-any.whl", "1.2.0rc1"],
    ["smartctx-0.1.0+local.7-py3-none-any.whl", "0.1.0+local.7"],
    ["other-0.1.0-py3-none-any.whl", undefined],
    ["smartctx-0.1.0.tar.gz", undefined],
  ])("%s", (file, version) => {
    expect(wheelVersion(file)).toBe(version);
  });
});

describe("relation", () => {
  it.each([
    ["0.1.0", "0.1.0", "same"],
    ["0.1", "0.1.0", "same"],
    ["0.0.9", "0.1.0", "older"],
    ["0.1.0rc1", "0.1.0", "older"],
    ["0.10.0", "0.9.0", "newer"],
    ["not a version", "0.1.0", "different"],
    [undefined, "0.1.0", "different"],
  ])("%s against %s: %s", (version, carried, expected) => {
    expect(relation(version, carried)).toBe(expected);
  });
});

describe("serverProtocolVersion", () => {
  it.each([
    ["a server that sends it", { smartctx: { protocolVersion: 3 } }, 3],
    ["a server from before the number", undefined, 0],
    ["other experimental entries only", { rustAnalyzer: {} }, 0],
    ["not a whole number", { smartctx: { protocolVersion: "1" } }, 0],
  ])("%s", (_case, experimental, expected) => {
    expect(serverProtocolVersion(experimental)).toBe(expected);
  });
});

describe("checkServer", () => {
  it("names a server of the carried version", () => {
    expect(checkServer(PATH_SERVER, "0.1.0", {})).toEqual({
      kind: "ok",
      detail: "Server: smartctx 0.1.0, python3 (python3 on the PATH).",
    });
  });

  it("asks about an older server, offering the update", () => {
    expect(checkServer({ ...PATH_SERVER, version: "0.0.9" }, "0.1.0", {})).toEqual({
      kind: "mismatch",
      canUpdate: true,
      message:
        "SmartCtx: smartctx 0.0.9 in python3 (python3 on the PATH) is older than the smartctx 0.1.0 this extension carries. " +
        "Update the Server installs 0.1.0 into SmartCtx's private environment and uses it instead.",
    });
  });

  it("asks about a newer server too", () => {
    const check = checkServer({ ...PATH_SERVER, version: "0.2.0" }, "0.1.0", {});
    expect(check.kind).toBe("mismatch");
    if (check.kind === "mismatch") expect(check.message).toContain("is newer than the smartctx 0.1.0");
  });

  it("asks no more once Use It Anyway was chosen for that launch and version", () => {
    const choices = { [choiceKey("python3", "0.0.9")]: "use-anyway" } as const;
    expect(checkServer({ ...PATH_SERVER, version: "0.0.9" }, "0.1.0", choices)).toEqual({
      kind: "accepted",
      detail:
        "Server: smartctx 0.0.9 in python3 (python3 on the PATH) is older than the smartctx 0.1.0 this extension carries (Use It Anyway).",
    });
    // Another version of the same server asks again.
    expect(checkServer({ ...PATH_SERVER, version: "0.0.8" }, "0.1.0", choices).kind).toBe("mismatch");
  });

  it("cannot offer the update for smartctx.server.command", () => {
    const check = checkServer(
      { ...PATH_SERVER, version: "0.0.9", fromCommand: true, launch: "smartctx serve" },
      "0.1.0",
      {},
    );
    expect(check).toMatchObject({ kind: "mismatch", canUpdate: false });
  });

  it("stops a server whose protocol is too old, whatever its version or the user's answers", () => {
    const old = { ...PATH_SERVER, protocolVersion: 0 };
    const choices = { [choiceKey("python3", "0.1.0")]: "use-anyway" } as const;
    expect(checkServer(old, "0.1.0", choices)).toEqual({
      kind: "too-old",
      canUpdate: true,
      message:
        `SmartCtx: smartctx 0.1.0 in python3 (python3 on the PATH) speaks protocol 0; this extension needs protocol ${PROTOCOL_VERSION} or later, so the server was stopped. ` +
        "Update the Server installs smartctx 0.1.0 into SmartCtx's private environment and uses it.",
    });
    // Without a carried wheel (the extension runs from a checkout) the protocol is still checked.
    expect(checkServer(old, undefined, {})).toMatchObject({ kind: "too-old", canUpdate: false });
  });

  it("checks only the protocol when the extension carries no wheel", () => {
    expect(checkServer({ ...PATH_SERVER, version: "0.0.9" }, undefined, {}).kind).toBe("ok");
  });

  it("says what the private environment runs in place of", () => {
    const standIn = {
      ...PATH_SERVER,
      launch: "/g/venv/bin/python",
      where: "/g/venv/bin/python (SmartCtx's private environment)",
      replaces: { version: "0.0.9", where: "python3 (python3 on the PATH)" },
    };
    expect(checkServer(standIn, "0.1.0", {})).toEqual({
      kind: "ok",
      detail:
        "Server: smartctx 0.1.0, /g/venv/bin/python (SmartCtx's private environment), in place of smartctx 0.0.9 in python3 (python3 on the PATH) (Update the Server).",
    });
  });
});

describe("privateEnvironmentIsCurrent", () => {
  const carried = { path: "/x/bundled/w.whl", file: "w.whl", version: "0.1.0", sha256: "aa" };
  it.each([
    ["installed from the carried wheel", { file: "w.whl", sha256: "aa" }, carried, true],
    ["another build (an updated extension)", { file: "w.whl", sha256: "bb" }, carried, false],
    ["no record (installed before records were kept)", undefined, carried, false],
    ["no carried wheel (a checkout)", undefined, undefined, true],
  ])("%s", (_case, installed, wheel, expected) => {
    expect(privateEnvironmentIsCurrent(installed, wheel)).toBe(expected);
  });
});
