// The extension's settings (package.json "contributes.configuration"), typed, and what the server
// receives of them. Pure: a settings reader is passed in, so the mapping is unit-tested.
import type { ContextOptions, WireSettings } from "./lsp_ext";

// Settings that decide how the server starts: a change restarts it. Every other smartctx setting
// reaches the running server as workspace/didChangeConfiguration. The server reads the base index's
// settings once, when it opens the workspace.
export const LAUNCH_SETTINGS = [
  "smartctx.server.command",
  "smartctx.server.python",
  "smartctx.baseIndex",
  "smartctx.baseIndexOnly",
] as const;

// smartctx.<setting> -> the contextForTask option it sets by default.
const CONTEXT_SETTINGS = {
  budgetTokens: "budgetTokens",
  maxBodies: "maxBodies",
  maxSummaries: "maxSummaries",
  hopDepth: "hopDepth",
  tokenizer: "tokenizer",
  tokenScale: "tokenScale",
  includePRs: "includePRs",
  includeImpact: "includeImpact",
} as const;

// package.json's default of smartctx.budgetTokens, which is also the server's.
export const DEFAULT_BUDGET_TOKENS = 8000;

// Reads one setting under "smartctx.": its value, and whether the user (or workspace) set it.
export interface SettingsReader {
  get(name: string): unknown;
  isSet(name: string): boolean;
}

function stringSetting(settings: SettingsReader, name: string, fallback: string): string {
  const value = settings.get(name);
  return typeof value === "string" ? value : fallback;
}

export interface ServerLaunchSettings {
  // The whole command line; empty when not set.
  command: string[];
  // The interpreter to run `-m smartctx serve` with; empty when not set.
  python: string;
}

export function launchSettings(settings: SettingsReader): ServerLaunchSettings {
  const command = settings.get("server.command");
  const python = settings.get("server.python");
  return {
    command: Array.isArray(command) ? command.filter((part): part is string => typeof part === "string") : [],
    python: typeof python === "string" ? python.trim() : "",
  };
}

// Only what the user set goes to the server as contextDefaults: the server's own defaults stay in
// force otherwise (they may depend on the budget), and package.json shows the same values.
export function contextDefaults(settings: SettingsReader): ContextOptions {
  const options: ContextOptions = {};
  for (const [setting, option] of Object.entries(CONTEXT_SETTINGS)) {
    const value = settings.get(setting);
    const typed = typeof value === "number" || typeof value === "boolean" || typeof value === "string";
    if (settings.isSet(setting) && typed) options[option] = value;
  }
  return options;
}

// The budget of a pack that a chat model counts: the client states it, in that model's tokens, so
// it is the user's smartctx.budgetTokens or package.json's default.
export function budgetTokens(settings: SettingsReader): number {
  const value = settings.get("budgetTokens");
  return typeof value === "number" && Number.isInteger(value) && value >= 1 ? value : DEFAULT_BUDGET_TOKENS;
}

// What initializationOptions and didChangeConfiguration carry. No indexDir: the server keeps each
// folder's index in the user cache folder, keyed by the folder's path, where an agent's
// `smartctx mcp` and the `smartctx` command line find the same index and share it (one writes, the
// others follow) instead of building another.
export function wireSettings(settings: SettingsReader): WireSettings {
  const hover = settings.get("hover.enabled");
  const debounce = settings.get("bufferDebounceMs");
  const exclude = settings.get("exclude");
  const baseIndex = settings.get("baseIndex");
  const wire: WireSettings = {
    clientLogLevel: stringSetting(settings, "server.logLevel", "warning"),
    hover: typeof hover === "boolean" ? hover : true,
    bufferDebounceMs: typeof debounce === "number" ? debounce : 150,
    exclude: Array.isArray(exclude)
      ? exclude.filter((pattern): pattern is string => typeof pattern === "string")
      : [],
    contextDefaults: contextDefaults(settings),
  };
  if (typeof baseIndex === "string" && baseIndex.trim() !== "") {
    wire.baseIndex = baseIndex.trim();
    if (settings.get("baseIndexOnly") === true) wire.baseIndexOnly = true;
  }
  return wire;
}
