// Packs sized in a model's tokens (src/token_fit.ts), against the real language server: the counters
// are models' tokenizers as the e2e's scripted model has them (one token per N characters) and one
// that counts words and punctuation, unlike either.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContextOptions, WireContextPack } from "../../src/lsp_ext";
import {
  CALIBRATION_STATE_KEY,
  CUT_NOTE,
  Calibration,
  FIRST_ASK_HEADROOM,
  MAX_CALIBRATED_MODELS,
  MIN_CALIBRATION_TOKENS,
  PACK_SHARE_OF_INPUT,
  PROBE_O200K_TOKENS,
  PROBE_TEXT,
  RATIOS_KEPT,
  chatBudget,
  cutToFit,
  fitPack,
  probeScale,
  statedBudget,
  tokenLine,
  toolBudget,
  type CountTokens,
  type ModelCounter,
  type StateStore,
} from "../../src/token_fit";
import { startOnFixture, type LanguageServer } from "./language_server";
import { python } from "./python";

// VS Code's global state keeps JSON: so does this store, by copying through it.
class JsonStore implements StateStore {
  readonly values = new Map<string, string>();
  get(key: string): unknown {
    const value = this.values.get(key);
    return value === undefined ? undefined : JSON.parse(value);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

const perCharacters =
  (characters: number): CountTokens =>
  (text) =>
    Promise.resolve(Math.ceil(text.length / characters));
const wordsAndMarks: CountTokens = (text) => Promise.resolve(text.match(/\w+|[^\s\w]/g)?.length ?? 0);

function counter(name: string, count: CountTokens): ModelCounter {
  return { name, key: `model:${name}`, count };
}

// Fenced blocks that are closed: every fence line pairs with the next one of the same marker.
function fencesClosed(text: string): boolean {
  let open: string | undefined;
  for (const line of text.split("\n")) {
    const fence = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) continue;
    if (open === undefined) open = fence;
    else if (line.trim() === open) open = undefined;
  }
  return open === undefined;
}

describe("the probe", () => {
  it("is as long in o200k_base tokens as the server's tokenizer counts it", () => {
    const counted = execFileSync(
      python(),
      [
        "-c",
        "import sys; from smartctx.core.tokens import TokenCounter; print(TokenCounter('o200k_base').count(sys.stdin.read()))",
      ],
      { input: PROBE_TEXT, encoding: "utf8" },
    );
    expect(Number(counted)).toBe(PROBE_O200K_TOKENS);
  });

  it("gives a model's first scale, within the protocol's range", () => {
    expect(probeScale(PROBE_O200K_TOKENS)).toBeCloseTo(FIRST_ASK_HEADROOM);
    expect(probeScale(2 * PROBE_O200K_TOKENS)).toBeCloseTo(2 * FIRST_ASK_HEADROOM);
    expect(probeScale(0)).toBe(0.1);
    expect(probeScale(100 * PROBE_O200K_TOKENS)).toBe(10);
  });
});

describe("Calibration", () => {
  it("asks with the largest recent ratio of a model, with headroom", async () => {
    const calibration = new Calibration(new JsonStore());
    expect(calibration.scale("model:a")).toBeUndefined();
    await calibration.record("model:a", 1.5);
    await calibration.record("model:a", 1.7);
    await calibration.record("model:a", 1.6);
    expect(calibration.scale("model:a")).toBeCloseTo(1.7 * FIRST_ASK_HEADROOM);
    expect(calibration.scale("model:b")).toBeUndefined();
  });

  it("keeps the last ratios of the most recently used models", async () => {
    const store = new JsonStore();
    let clock = 0;
    const calibration = new Calibration(store, () => ++clock);
    for (let index = 0; index < RATIOS_KEPT + 3; index++)
      await calibration.record("model:a", 1 + index / 100);
    expect(calibration.ratios("model:a")).toHaveLength(RATIOS_KEPT);
    expect(calibration.ratios("model:a").at(0)).toBeCloseTo(1.03);
    for (let index = 0; index < MAX_CALIBRATED_MODELS; index++) await calibration.record(`model:${index}`, 2);
    expect(calibration.ratios("model:a")).toEqual([]);
    expect(calibration.ratios(`model:${MAX_CALIBRATED_MODELS - 1}`)).toEqual([2]);
    const stored = store.get(CALIBRATION_STATE_KEY) as { models: object };
    expect(Object.keys(stored.models)).toHaveLength(MAX_CALIBRATED_MODELS);
  });

  it("ignores ratios outside the protocol's range and whatever else the state holds", async () => {
    const store = new JsonStore();
    await store.update(CALIBRATION_STATE_KEY, {
      models: { "model:a": { ratios: [1.2, "2", null, 50], usedAt: 1 }, "model:b": "junk", "model:c": {} },
      chatModel: 7,
    });
    const calibration = new Calibration(store);
    await calibration.record("model:a", Number.NaN);
    await calibration.record("model:a", 0.01);
    expect(calibration.ratios("model:a")).toEqual([1.2]);
    expect(calibration.ratios("model:b")).toEqual([]);
    expect(calibration.chatModel).toBeUndefined();
    await calibration.rememberChatModel("claude-sonnet-4.5");
    expect(new Calibration(store).chatModel).toBe("claude-sonnet-4.5");
  });
});

describe("budgets", () => {
  it("caps @smartctx's budget to a share of the model's input window", () => {
    expect(chatBudget(8000, 128_000)).toBe(8000);
    expect(chatBudget(8000, 6000)).toBe(6000 * PACK_SHARE_OF_INPUT);
    expect(chatBudget(8000, 0)).toBe(8000);
  });

  it("caps a tool call's budget to the tokenBudget VS Code gives", () => {
    expect(toolBudget(8000, 3000)).toBe(3000);
    expect(toolBudget(2000, 3000.7)).toBe(2000);
    expect(toolBudget(8000, Number.POSITIVE_INFINITY)).toBe(8000);
    expect(toolBudget(8000, 0)).toBe(8000);
  });
});

describe("cutToFit", () => {
  const text =
    "# Context for: totals\n\n## 1. function `total` — a.py:1-40\n\n```python\n" +
    Array.from({ length: 40 }, (_, line) => `    total += item_${line}.price * item_${line}.quantity\n`).join(
      "",
    ) +
    "```\n\n## Related definitions (signatures)\n\n- a.py:50-52 function `tax`\n";

  it.each([60, 200, 400, 1000])("cuts at a line end within %i tokens, its fence closed", async (budget) => {
    const count = perCharacters(2.5);
    const cut = await cutToFit(text, budget, count);
    expect(await count(cut)).toBeLessThanOrEqual(budget);
    expect(cut.endsWith(CUT_NOTE)).toBe(true);
    expect(fencesClosed(cut)).toBe(true);
    // What is kept is a start of the text up to a line end, then the fence it left open closed.
    const kept = cut.slice(0, -CUT_NOTE.length);
    const start = text.startsWith(kept) ? kept : kept.slice(0, -"```\n".length);
    expect(text.startsWith(start) && start.endsWith("\n")).toBe(true);
  });

  it("leaves nothing when not even the note fits", async () => {
    expect(await cutToFit(text, 5, perCharacters(2.5))).toBe("");
  });
});

describe("fitPack against the real language server", () => {
  let server: LanguageServer;
  const TASK = "parse the config file and validate each entry";
  // Enough definitions that the budget, not their number, decides what a pack holds.
  const WIDE = { maxBodies: 20, maxSummaries: 100 };
  const BUDGET = 1200;
  const ask =
    (task: string) =>
    (options: ContextOptions): Promise<WireContextPack> =>
      server.contextForTask({ task, options: { ...WIDE, ...options } });

  beforeAll(async () => {
    server = await startOnFixture("languages");
  }, 90_000);
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ["one token per 2 characters", perCharacters(2)],
    ["one token per 2.5 characters", perCharacters(2.5)],
    ["one token per 4 characters", perCharacters(4)],
    ["a token per word or mark", wordsAndMarks],
  ])("a pack counted at %s fits, and once calibrated fits at the first ask", async (name, count) => {
    const calibration = new Calibration(new JsonStore());
    const model = counter(name, count);

    const first = await fitPack(ask(TASK), BUDGET, model, calibration);
    const again = await fitPack(ask(TASK), BUDGET, model, calibration);

    for (const sized of [first, again]) {
      expect(sized.count.tokens).toBe(await count(sized.count.text));
      expect(sized.count.tokens).toBeLessThanOrEqual(BUDGET);
      expect(sized.count.cut).toBe(false);
      expect(sized.pack.metadata.tokenModel).toBe(name);
      expect(sized.pack.budgetTokens).toBe(Math.floor(BUDGET / sized.pack.metadata.tokenScale));
      expect(sized.pack.tokensUsed).toBeLessThanOrEqual(sized.pack.budgetTokens);
    }
    expect(again.count.asks).toBe(1);
    // The budget binds (the pack was trimmed), and the calibrated pack fills most of it.
    expect(again.pack.trimmed).toBe(true);
    expect(again.count.tokens).toBeGreaterThan(0.85 * BUDGET);
    expect(calibration.ratios(model.key).length).toBe(first.count.asks + 1);
  });

  it("cuts what a second ask still returns over, whatever the server sends", async () => {
    // A server that ignores the scale: the pack of a budget four times as large, every time.
    const large = await ask(TASK)({ budgetTokens: 4 * BUDGET });
    const calibration = new Calibration(new JsonStore());
    const count = perCharacters(2.5);

    const sized = await fitPack(
      () => Promise.resolve(large),
      BUDGET,
      counter("stubborn", count),
      calibration,
    );

    expect(sized.count).toMatchObject({ asks: 2, cut: true });
    expect(sized.count.tokens).toBe(await count(sized.count.text));
    expect(sized.count.tokens).toBeLessThanOrEqual(BUDGET);
    expect(sized.count.tokens).toBeGreaterThan(0.9 * BUDGET);
    expect(sized.count.text.endsWith(CUT_NOTE)).toBe(true);
    expect(fencesClosed(sized.count.text)).toBe(true);
    expect(tokenLine(sized.pack, sized.count)).toBe(
      `${sized.count.tokens.toLocaleString("en-US")} / 1,200 tokens, counted by stubborn (cut to fit)`,
    );
  });

  it("keeps no ratio of a pack too short to say one", async () => {
    const calibration = new Calibration(new JsonStore());
    const sized = await fitPack(
      ask("zzzz qqqq nothing like this"),
      BUDGET,
      counter("short", perCharacters(3)),
      calibration,
    );
    expect(sized.pack.tokensUsed).toBeLessThan(MIN_CALIBRATION_TOKENS);
    expect(calibration.ratios("model:short")).toEqual([]);
  });

  it("shows a pack no model counted in the tokenizer's tokens, and its stated budget", async () => {
    const pack = await ask(TASK)({ budgetTokens: 1000, tokenScale: 1.25 });
    expect(tokenLine(pack, undefined)).toBe(
      `${pack.tokensUsed.toLocaleString("en-US")} / 800 tokens (o200k_base)`,
    );
    expect(statedBudget(pack, undefined)).toBe(1000);
  });
});
