// VS Code settings -> what the server receives, and which settings restart it.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_BUDGET_TOKENS,
  budgetTokens,
  contextDefaults,
  launchSettings,
  wireSettings,
  type SettingsReader,
} from "../../src/config";
import { MAX_TOKEN_SCALE, MIN_TOKEN_SCALE, OPTION_NAMES } from "../../src/lsp_ext";

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
      tokenScale: 1.25,
      "hover.enabled": false,
      exclude: ["docs/", 3],
      "server.logLevel": "debug",
      baseIndex: " postgresql://editor@db.internal/smartctx ",
      baseIndexOnly: true,
    });
    expect(wireSettings(settings)).toEqual({
      clientLogLevel: "debug",
      hover: false,
      bufferDebounceMs: 150,
      exclude: ["docs/"],
      baseIndex: "postgresql://editor@db.internal/smartctx",
      baseIndexOnly: true,
      contextDefaults: {
        budgetTokens: 16000,
        maxBodies: 8,
        includeImpact: true,
        tokenizer: "cl100k_base",
        tokenScale: 1.25,
      },
    });
  });

  it("uses only option names the server knows", () => {
    const every = reader({
      budgetTokens: 1,
      maxBodies: 1,
      maxSummaries: 1,
      hopDepth: 1,
      tokenizer: "o200k_base",
      tokenScale: 1,
      includePRs: true,
      includeImpact: true,
    });
    const names: readonly string[] = OPTION_NAMES;
    for (const name of Object.keys(contextDefaults(every))) expect(names).toContain(name);
    expect(Object.keys(contextDefaults(every))).toHaveLength(8);
  });
});

describe("budgetTokens", () => {
  it("is the user's budget, else the default", () => {
    expect(budgetTokens(reader())).toBe(DEFAULT_BUDGET_TOKENS);
    expect(budgetTokens(reader({ budgetTokens: 3000 }))).toBe(3000);
    expect(budgetTokens(reader({ budgetTokens: "lots" }))).toBe(DEFAULT_BUDGET_TOKENS);
  });
});

describe("package.json settings", () => {
  // The server's own defaults and limits (server/smartctx/core/context.py ContextOptions).
  it.each([
    ["budgetTokens", DEFAULT_BUDGET_TOKENS, 1, 1_000_000],
    ["tokenScale", 1, MIN_TOKEN_SCALE, MAX_TOKEN_SCALE],
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
