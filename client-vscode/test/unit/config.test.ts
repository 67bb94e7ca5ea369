// VS Code settings -> what the server receives, and which settings restart it.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { contextDefaults, launchSettings, wireSettings, type SettingsReader } from "../../src/config";
import { OPTION_NAMES } from "../../src/lsp_ext";

interface Contributed {
  default: unknown;
  minimum?: number;
  maximum?: number;
}
const manifest = JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, Contributed> } };
};
const properties = manifest.contributes.configuration.properties;

// A reader over package.json's defaults with some values set by the user.
function reader(set: Record<string, unknown> = {}): SettingsReader {
  return {
    get: (name) => (name in set ? set[name] : properties[`smartctx.${name}`]?.default),
    isSet: (name) => name in set,
  };
}

describe("wireSettings", () => {
  it("sends the defaults as the server's defaults, and no context option the user did not set", () => {
    expect(wireSettings(reader())).toEqual({
      clientLogLevel: "warning",
      hover: true,
      bufferDebounceMs: 150,
      exclude: [],
      contextDefaults: {},
    });
  });

  it("maps each setting the user set", () => {
    const settings = reader({
      budgetTokens: 16000,
      maxBodies: 8,
      includeImpact: true,
      tokenizer: "cl100k_base",
      "hover.enabled": false,
      exclude: ["docs/", 3],
      "server.logLevel": "debug",
    });
    expect(wireSettings(settings)).toEqual({
      clientLogLevel: "debug",
      hover: false,
      bufferDebounceMs: 150,
      exclude: ["docs/"],
      contextDefaults: { budgetTokens: 16000, maxBodies: 8, includeImpact: true, tokenizer: "cl100k_base" },
    });
  });

  it("uses only option names the server knows", () => {
    const every = reader({
      budgetTokens: 1,
      maxBodies: 1,
      maxSummaries: 1,
      hopDepth: 1,
      tokenizer: "o200k_base",
      includePRs: true,
      includeImpact: true,
    });
    const names: readonly string[] = OPTION_NAMES;
    for (const name of Object.keys(contextDefaults(every))) expect(names).toContain(name);
    expect(Object.keys(contextDefaults(every))).toHaveLength(7);
  });
});

describe("package.json settings", () => {
  // The server's own defaults and limits (server/smartctx/core/context.py ContextOptions).
  it.each([
    ["budgetTokens", 8000, 1, 1_000_000],
    ["maxBodies", null, 0, 200],
    ["maxSummaries", null, 0, 1000],
    ["hopDepth", 1, 0, 3],
    ["bufferDebounceMs", 150, 0, 10_000],
  ])(
    "smartctx.%s defaults to %s within %d..%d, as the server (null: chosen from the budget)",
    (name, value, minimum, maximum) => {
      expect(properties[`smartctx.${name}`]).toMatchObject({ default: value, minimum, maximum });
    },
  );
});

describe("launchSettings", () => {
  it("reads the command and the interpreter, ignoring junk", () => {
    expect(launchSettings(reader())).toEqual({ command: [], python: "" });
    expect(
      launchSettings(
        reader({ "server.command": ["/bin/smartctx", 7, "serve"], "server.python": " /usr/bin/python3 " }),
      ),
    ).toEqual({
      command: ["/bin/smartctx", "serve"],
      python: "/usr/bin/python3",
    });
  });
});
