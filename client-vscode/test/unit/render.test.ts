// The panel's HTML from real packs: what a person sees, with nothing from the repository able to
// inject markup or script.
import { describe, expect, it } from "vitest";
import type { WireContextPack } from "../../src/lsp_ext";
import {
  citedItem,
  escapeHtml,
  freshnessLine,
  highlight,
  renderPanel,
  type PanelView,
} from "../../src/render";
import { realPack } from "./python";

const RESOURCES = {
  nonce: "bm9uY2U=",
  cspSource: "https://webview.example",
  scriptUri: "https://webview.example/media/panel.js",
  styleUri: "https://webview.example/media/panel.css",
};

const TASK = "charge_card should raise PaymentDeclined when the gateway refuses";
const pack = realPack(TASK, "--include-impact", "--max-bodies", "3");

function view(of: WireContextPack): PanelView {
  return { title: "SmartCtx: charge card", pack: of };
}

function citations(html: string): string[] {
  return [...html.matchAll(/<a class="citation" href="#" data-item="([^"]+)"[^>]*>([^<]+)<\/a>/g)].map(
    (match) => `${match[1] ?? ""} ${match[2] ?? ""}`,
  );
}

describe("renderPanel", () => {
  const html = renderPanel(view(pack), RESOURCES);

  it("lists every body and summary with its citation as a link, in the server's order", () => {
    const expected = [
      ...pack.bodies.map((body, index) => `bodies:${index} ${body.citation}`),
      ...pack.summaries.map((summary, index) => `summaries:${index} ${summary.citation}`),
    ];
    expect(citations(html).slice(0, expected.length)).toEqual(expected);
    expect(pack.bodies[0]?.citation).toMatch(/^shop\/payments\.py:\d+-\d+$/);
  });

  it("shows the impact section's entries as links", () => {
    const impact = pack.impact;
    expect(impact).toBeDefined();
    const callers = impact?.groups.callers ?? [];
    expect(callers.length).toBeGreaterThan(0);
    expect(citations(html)).toContain(`impact:callers:0 ${callers[0]?.citation ?? ""}`);
  });

  it("colours code with highlight.js classes and keeps the source text", () => {
    expect(html).toContain('<span class="hljs-keyword">def</span>');
    const text = html
      .replace(/<[^>]+>/g, "")
      .replace(/&quot;/g, '"')
      .replace(/&gt;/g, ">")
      .replace(/&lt;/g, "<");
    expect(text).toContain("raise PaymentDeclined(response.get(");
  });

  it("has a strict content security policy: no remote or inline code but our nonce", () => {
    expect(html).toContain(
      `default-src 'none'; style-src ${RESOURCES.cspSource}; script-src 'nonce-${RESOURCES.nonce}'`,
    );
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((match) => match[1]);
    expect(scripts).toEqual([` nonce="${RESOURCES.nonce}" src="${RESOURCES.scriptUri}"`]);
    expect(html).not.toMatch(/https?:\/\/(?!webview\.example)/);
  });

  it("shows the freshness line and the budget", () => {
    expect(freshnessLine(pack)).toBe(
      `${pack.metadata.freshness.indexedFiles} files indexed · up to date · ${pack.tokensUsed} / 8,000 tokens (o200k_base)`,
    );
    expect(html).toContain("Re-run with 16,000 tokens");
  });

  it("names the chat model that counted the pack, and re-runs with twice its budget", () => {
    const count = {
      model: "claude-sonnet-4.5",
      tokens: 2940,
      budgetTokens: 3000,
      text: pack.text,
      asks: 1,
      cut: false,
    };
    const counted = renderPanel({ ...view(pack), count }, RESOURCES);
    expect(freshnessLine(pack, count)).toMatch(/ · 2,940 \/ 3,000 tokens, counted by claude-sonnet-4\.5$/);
    expect(counted).toContain("2,940 / 3,000 tokens, counted by claude-sonnet-4.5");
    expect(counted).toContain("Re-run with 6,000 tokens");
  });

  it("shows warnings, a stale index and an empty result", () => {
    const stale: WireContextPack = {
      ...pack,
      notFound: true,
      metadata: {
        ...pack.metadata,
        freshness: { ...pack.metadata.freshness, pendingFiles: 3, gitHead: "0123456789abcdef", dirty: true },
        warnings: [
          { code: "secret-redacted", nodeId: "a.py::f", message: "a secret was replaced by [REDACTED]" },
        ],
      },
    };
    const shown = renderPanel(view(stale), RESOURCES);
    expect(shown).toContain('data-code="secret-redacted"');
    expect(shown).toContain("3 changed files are not indexed yet");
    expect(shown).toContain("Nothing in the index matched this task.");
    expect(freshnessLine(stale)).toContain("git 0123456789 (uncommitted changes)");
  });

  it("escapes repository text everywhere it appears", () => {
    const hostile = '<img src=x onerror="alert(1)">';
    const body = pack.bodies[0];
    const summary = pack.summaries[0];
    if (!body || !summary) throw new Error("the fixture pack has a body and a summary");
    const evil: WireContextPack = {
      ...pack,
      taskDescription: hostile,
      bodies: [
        { ...body, qualifiedName: hostile, source: hostile, language: "nolanguage", citation: hostile },
      ],
      summaries: [{ ...summary, signature: hostile, doc: hostile }],
    };
    const shown = renderPanel({ title: hostile, pack: evil }, RESOURCES);
    expect(shown).not.toContain("<img");
    expect(shown).toContain(escapeHtml(hostile));
  });

  it("prefixes citations with the folder name in multi-root packs", () => {
    const body = pack.bodies[0];
    if (!body) throw new Error("the fixture pack has a body");
    const multi = { ...pack, bodies: [{ ...body, workspaceFolder: "file:///work/billing" }], summaries: [] };
    expect(citations(renderPanel(view(multi), RESOURCES))[0]).toBe(`bodies:0 billing/${body.citation}`);
  });
});

describe("the file map", () => {
  const entry = {
    filePath: "shop/<refunds>.py",
    score: 0.8,
    reason: "its text matches the task",
    symbols: [{ kind: "function", qualifiedName: "refund_all", startLine: 12, endLine: 30 }],
    tokens: 20,
  };
  const mapped = view({ ...pack, fileMap: [...pack.fileMap, entry] });
  const index = pack.fileMap.length;

  it("lists each further file and its definitions as links, escaped", () => {
    const shown = renderPanel(mapped, RESOURCES);
    expect(citations(shown)).toContain(`fileMap:${index} shop/&lt;refunds&gt;.py`);
    expect(citations(shown)).toContain(`fileMap:${index}:0 refund_all:12`);
    expect(shown).toContain("its text matches the task");
    expect(shown).not.toContain("<refunds>");
  });

  it("opens the file at its first line, and a definition at its lines", () => {
    expect(citedItem(mapped, `fileMap:${index}`)).toEqual({
      filePath: entry.filePath,
      startLine: 1,
      endLine: 1,
      workspaceFolder: undefined,
    });
    expect(citedItem(mapped, `fileMap:${index}:0`)).toMatchObject({ startLine: 12, endLine: 30 });
    expect(citedItem(mapped, `fileMap:${index}:5`)).toBeUndefined();
  });
});

describe("the symbol of a hover link", () => {
  const body = pack.bodies[0];
  if (!body) throw new Error("the fixture pack has a body");
  const symbol = { ...body, signature: "def charge_card()", doc: "", warnings: [] };

  it("comes first, in full, when the pack does not quote it", () => {
    const other = { ...symbol, id: "shop/other.py::f", citation: "shop/other.py:1-2" };
    const shown = renderPanel({ ...view(pack), symbol: other }, RESOURCES);
    expect(citations(shown)[0]).toBe("symbol shop/other.py:1-2");
  });

  it("is not shown twice when the pack quotes it", () => {
    const shown = renderPanel({ ...view(pack), symbol }, RESOURCES);
    expect(citations(shown)[0]).toBe(`bodies:0 ${body.citation}`);
  });
});

describe("citedItem", () => {
  it("finds what each link names and nothing else", () => {
    const shown = view(pack);
    expect(citedItem(shown, "bodies:0")).toBe(pack.bodies[0]);
    expect(citedItem(shown, "summaries:1")).toBe(pack.summaries[1]);
    expect(citedItem(shown, "impact:callers:0")).toMatchObject({
      filePath: pack.impact?.groups.callers?.[0]?.filePath,
    });
    expect(citedItem(shown, "bodies:99")).toBeUndefined();
    expect(citedItem(shown, "symbol")).toBeUndefined();
    expect(citedItem(shown, "nonsense")).toBeUndefined();
  });
});

describe("highlight", () => {
  it("knows TSX as TypeScript and escapes languages it does not know", () => {
    expect(highlight("const a: number = 1;", "tsx")).toContain("hljs-keyword");
    expect(highlight("<b>", "cobol")).toBe("&lt;b&gt;");
  });
});
