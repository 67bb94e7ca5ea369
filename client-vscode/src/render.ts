// The panel's HTML, rendered from exactly what the server sent: no ranking, no filtering here. Pure
// (no vscode import), so its output is unit-tested. Code is coloured by highlight.js into classes
// that media/panel.css maps to the theme's colours.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import kotlin from "highlight.js/lib/languages/kotlin";
import lua from "highlight.js/lib/languages/lua";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import scala from "highlight.js/lib/languages/scala";
import typescript from "highlight.js/lib/languages/typescript";
import type { CitedItem } from "./citations";
import { statedBudget, tokenLine, type ModelCount } from "./token_fit";
import type {
  WireContextPack,
  WireFileMapEntry,
  WireImpactEntry,
  WireNode,
  WireSummary,
  WireWarning,
} from "./lsp_ext";

// The server's language names (parsing/languages.py) -> highlight.js grammars.
const GRAMMARS = {
  bash,
  c,
  cpp,
  csharp,
  go,
  java,
  javascript,
  kotlin,
  lua,
  php,
  python,
  ruby,
  rust,
  scala,
  typescript,
};
for (const [name, grammar] of Object.entries(GRAMMARS)) hljs.registerLanguage(name, grammar);
const LANGUAGE_ALIASES: Record<string, string> = { tsx: "typescript" };

// What the panel shows: a pack, and for "context for symbol" the symbol itself in full first
// (unless the pack already quotes it in full); `count` when a chat model counted the pack.
export interface PanelView {
  title: string;
  pack: WireContextPack;
  symbol?: WireNode;
  count?: ModelCount;
}

// What the webview needs from VS Code to load our own files under a strict policy.
export interface PanelResources {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  styleUri: string;
}

// A reference to one cited item of the view, sent back by the webview when a citation is clicked:
// "symbol", "bodies:3", "summaries:0", "fileMap:4" (the file), "fileMap:4:1" (one of its
// definitions), "impact:callers:2".
export type ItemRef = string;

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

export function highlight(code: string, language: string): string {
  const grammar = LANGUAGE_ALIASES[language] ?? language;
  if (!hljs.getLanguage(grammar)) return escapeHtml(code);
  return hljs.highlight(code, { language: grammar, ignoreIllegals: true }).value;
}

function citationLink(ref: ItemRef, citation: string, folder: string | undefined): string {
  const shown = folder ? `${folder}/${citation}` : citation;
  return `<a class="citation" href="#" data-item="${escapeHtml(ref)}" title="Open ${escapeHtml(shown)}">${escapeHtml(shown)}</a>`;
}

// The folder's name for a multi-root citation: the last segment of its URI.
function folderName(uri: string | undefined): string | undefined {
  if (uri === undefined) return undefined;
  const trimmed = uri.replace(/\/+$/, "");
  return decodeURIComponent(trimmed.slice(trimmed.lastIndexOf("/") + 1));
}

function scoreBadge(score: number, parts: Record<string, number> | undefined): string {
  const explained = parts
    ? Object.entries(parts)
        .map(([name, value]) => `${name} ${value.toFixed(3)}`)
        .join(", ")
    : "";
  const title = explained ? ` title="${escapeHtml(explained)}"` : "";
  return `<span class="score"${title}>score ${score.toFixed(3)}</span>`;
}

export function freshnessLine(pack: WireContextPack, count?: ModelCount): string {
  const fresh = pack.metadata.freshness;
  const parts = [`${fresh.indexedFiles.toLocaleString("en-US")} files indexed`];
  parts.push(fresh.pendingFiles > 0 ? `${fresh.pendingFiles.toLocaleString("en-US")} pending` : "up to date");
  if (fresh.gitHead)
    parts.push(`git ${fresh.gitHead.slice(0, 10)}${fresh.dirty ? " (uncommitted changes)" : ""}`);
  parts.push(tokenLine(pack, count));
  return parts.join(" · ");
}

function warningsBlock(warnings: WireWarning[], notFound: boolean, pending: number): string {
  const rows = warnings.map(
    (warning) =>
      `<li class="warning" data-code="${escapeHtml(warning.code)}"><code>${escapeHtml(warning.code)}</code> ${escapeHtml(warning.message)}</li>`,
  );
  if (notFound)
    rows.unshift(`<li class="warning" data-code="not-found">Nothing in the index matched this task.</li>`);
  if (pending > 0) {
    rows.unshift(
      `<li class="warning" data-code="stale">${pending.toLocaleString("en-US")} changed files are not indexed yet; the pack may miss them.</li>`,
    );
  }
  return rows.length ? `<ul class="warnings">${rows.join("")}</ul>` : "";
}

function codeBlock(source: string, language: string): string {
  return `<pre class="code"><code class="hljs language-${escapeHtml(language)}">${highlight(source, language)}</code></pre>`;
}

function symbolSection(symbol: WireNode): string {
  return `<section class="symbol">
<h2>${escapeHtml(symbol.kind)} <code>${escapeHtml(symbol.qualifiedName)}</code> ${citationLink("symbol", symbol.citation, folderName(symbol.workspaceFolder))}</h2>
${symbol.doc ? `<p class="doc">${escapeHtml(symbol.doc)}</p>` : ""}
${codeBlock(symbol.source, symbol.language)}
</section>`;
}

function summaryRow(summary: WireSummary, index: number): string {
  return `<li class="summary">
<div class="item-head">${citationLink(`summaries:${index}`, summary.citation, folderName(summary.workspaceFolder))} <span class="kind">${escapeHtml(summary.kind)}</span> <code class="name">${escapeHtml(summary.qualifiedName)}</code> ${scoreBadge(summary.score, undefined)}</div>
${summary.signature ? `<pre class="signature"><code>${escapeHtml(summary.signature)}</code></pre>` : ""}
${summary.doc ? `<div class="doc">${escapeHtml(summary.doc)}</div>` : ""}
</li>`;
}

function fileMapRow(entry: WireFileMapEntry, index: number): string {
  const folder = folderName(entry.workspaceFolder);
  const symbols = entry.symbols
    .map((symbol, position) =>
      citationLink(`fileMap:${index}:${position}`, `${symbol.qualifiedName}:${symbol.startLine}`, undefined),
    )
    .join(", ");
  return `<li>${citationLink(`fileMap:${index}`, entry.filePath, folder)}${entry.reason ? ` <span class="reason">(${escapeHtml(entry.reason)})</span>` : ""}${symbols ? `: ${symbols}` : ""}</li>`;
}

function impactEntry(group: string, entry: WireImpactEntry, index: number): string {
  return `<li>${citationLink(`impact:${group}:${index}`, entry.citation, undefined)} <span class="kind">${escapeHtml(entry.kind)}</span> <code>${escapeHtml(entry.qualifiedName)}</code> <span class="depth">depth ${entry.depth}</span></li>`;
}

function impactSection(pack: WireContextPack): string {
  const impact = pack.impact;
  if (!impact) return "";
  const groups = Object.entries(impact.groups)
    .map(
      ([group, entries]) =>
        `<h3>${escapeHtml(group)}</h3><ul class="impact">${entries.map((entry, index) => impactEntry(group, entry, index)).join("")}</ul>`,
    )
    .join("");
  const more = impact.truncated
    ? `<p class="note">${impact.found} dependents found; the first are shown.</p>`
    : "";
  return `<section><h2>Impact: what depends on <code>${escapeHtml(impact.target.id)}</code></h2>${groups}${more}</section>`;
}

// What the panel shows of a view: everything inside its #content element. A panel already open
// swaps this in (panel.js) instead of loading a new document.
export function renderPanelContent(view: PanelView): string {
  const { pack } = view;
  const bodies = pack.bodies
    .map(
      (body, index) => `<article class="body">
<div class="item-head"><span class="rank">${index + 1}.</span> <span class="kind">${escapeHtml(body.kind)}</span> <code class="name">${escapeHtml(body.qualifiedName)}</code> ${citationLink(`bodies:${index}`, body.citation, folderName(body.workspaceFolder))} ${scoreBadge(body.score, body.scoreParts)} <span class="tokens">${body.tokens} tokens</span></div>
${codeBlock(body.source, body.language)}
${body.recentPRs.length ? `<ul class="changes">${body.recentPRs.map((change) => `<li>${change.pr !== null ? `PR #${change.pr}` : `commit ${escapeHtml(change.commit.slice(0, 10))}`}: ${escapeHtml(change.title)} <span class="meta">(${escapeHtml(change.author)}, ${escapeHtml(change.date.slice(0, 10))})</span></li>`).join("")}</ul>` : ""}
</article>`,
    )
    .join("\n");
  const summaries = pack.summaries.length
    ? `<section><h2>Related definitions</h2><ul class="summaries">${pack.summaries.map(summaryRow).join("")}</ul></section>`
    : "";
  const fileMap = pack.fileMap.length
    ? `<section><h2>Other likely files</h2><ul class="file-map">${pack.fileMap.map(fileMapRow).join("")}</ul></section>`
    : "";
  return `<header>
<h1>${escapeHtml(view.title)}</h1>
<p class="task">${escapeHtml(pack.taskDescription)}</p>
<p class="freshness">${escapeHtml(freshnessLine(pack, view.count))}</p>
<div class="actions">
<button data-action="copy" title="Copy the pack as Markdown, as a model reads it">Copy as Markdown</button>
<button data-action="attach" title="Open Copilot Chat with this pack attached">Attach to Chat</button>
<button data-action="rerun" title="Ask again with twice the token budget">Re-run with ${(statedBudget(pack, view.count) * 2).toLocaleString("en-US")} tokens</button>
</div>
${warningsBlock(pack.metadata.warnings, pack.notFound, pack.metadata.freshness.pendingFiles)}
</header>
<main>
${view.symbol && !pack.bodies.some((body) => body.id === view.symbol?.id) ? symbolSection(view.symbol) : ""}
${bodies ? `<section class="bodies">${bodies}</section>` : ""}
${summaries}
${fileMap}
${impactSection(pack)}
</main>`;
}

// The panel's whole document: a strict content security policy (our stylesheet and one script
// with a nonce, nothing remote, nothing inline) around the view's content.
export function renderPanel(view: PanelView, resources: PanelResources): string {
  const csp = [
    "default-src 'none'",
    `style-src ${resources.cspSource}`,
    `script-src 'nonce-${resources.nonce}'`,
    `img-src ${resources.cspSource}`,
    `font-src ${resources.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(resources.styleUri)}">
<title>${escapeHtml(view.title)}</title>
</head>
<body>
<div id="content">
${renderPanelContent(view)}
</div>
<script nonce="${resources.nonce}" src="${escapeHtml(resources.scriptUri)}"></script>
</body>
</html>`;
}

// The item a citation link in the panel refers to, or undefined for a reference it never rendered.
export function citedItem(view: PanelView, ref: ItemRef): CitedItem | undefined {
  if (ref === "symbol") return view.symbol;
  const [section, first, second] = ref.split(":");
  if (section === "bodies") return view.pack.bodies[Number(first)];
  if (section === "summaries") return view.pack.summaries[Number(first)];
  if (section === "fileMap") {
    const entry = view.pack.fileMap[Number(first)];
    if (!entry) return undefined;
    const symbol = second === undefined ? undefined : entry.symbols[Number(second)];
    if (second !== undefined && !symbol) return undefined;
    // The file itself opens at its first line.
    return {
      filePath: entry.filePath,
      startLine: symbol ? symbol.startLine : 1,
      endLine: symbol ? symbol.endLine : 1,
      workspaceFolder: entry.workspaceFolder,
    };
  }
  if (section === "impact" && first !== undefined && view.pack.impact) {
    const entry = view.pack.impact.groups[first]?.[Number(second)];
    // Impact entries are relative to the folder of the impact's target.
    return entry && { ...entry, workspaceFolder: view.pack.impact.target.workspaceFolder };
  }
  return undefined;
}
