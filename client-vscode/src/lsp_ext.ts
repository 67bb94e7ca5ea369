// The custom smartctx protocol, mirrored from the server's definition of it: the wire shapes and
// option names of server/smartctx/wire/ (shapes.py, options.py) and the method names, codes, params
// and settings of server/smartctx/lsp/protocol.py. This is the only file of the client that knows
// them; test/unit/drift.test.ts fails when it and the server disagree, so change both together.
import * as lc from "vscode-languageserver-protocol";

export const CONTEXT_FOR_TASK = "smartctx/contextForTask";
export const INDEX_STATUS = "smartctx/indexStatus";
export const EXPAND = "smartctx/expand";
export const CONTEXT_FOR_SYMBOL_COMMAND = "smartctx.contextForSymbol";
export const REINDEX_COMMAND = "smartctx.reindex";
export const CONFIGURATION_SECTION = "smartctx";

export const INDEX_UNAVAILABLE_CODE = -32010;
export const CONTENT_MODIFIED_CODE = -32801;
export const MAX_FOCUS_FILES = 200;
// The pack warning naming contextForTask params fields the protocol does not define (ignored).
export const UNKNOWN_FIELD_WARNING = "unknown-field";

// The protocol version this client is written for (protocol.py PROTOCOL_VERSION): a server must
// send it or a later one in capabilities.experimental.smartctx.protocolVersion (none sent: 0).
export const PROTOCOL_VERSION = 3;

// The camelCase option names of contextForTask (wire/options.py OPTION_FIELDS). budgetTokens is counted
// exactly with `tokenizer`; with tokenScale it is stated in a reader's tokens, that many per
// tokenizer token, and the pack is made in floor(budgetTokens / tokenScale) tokenizer tokens (its
// budgetTokens). tokenModel names that reader; the pack's metadata repeats both.
export const OPTION_NAMES = [
  "budgetTokens",
  "maxBodies",
  "maxSummaries",
  "candidateLimit",
  "rankedCap",
  "hopDepth",
  "hopFrontierCap",
  "includeBlobs",
  "includePRs",
  "prsPerNode",
  "prCutoff",
  "includeImpact",
  "impactDepth",
  "tokenizer",
  "tokenScale",
  "tokenModel",
] as const;

// The range of the tokenScale option.
export const MIN_TOKEN_SCALE = 0.1;
export const MAX_TOKEN_SCALE = 10;

export type ContextOptions = Partial<Record<(typeof OPTION_NAMES)[number], number | boolean | string>>;

export type IndexState = "indexing" | "ready" | "failed";
export type IndexRole = "writer" | "follower" | "mixed";

export interface SmartctxCapabilities {
  protocolVersion: number;
}

// The initialize result's capabilities.experimental.
export interface ExperimentalCapabilities {
  smartctx: SmartctxCapabilities;
}

export interface WirePosition {
  line: number;
  character: number;
}

export interface WireOpenFile {
  uri: string;
  // Shown in an editor now (default false); a tab in the background is open but not visible.
  visible?: boolean;
}

export interface WireRecentEdit {
  uri: string;
  // When the file was last edited, ISO 8601 (`new Date().toISOString()`).
  editedAt: string;
}

// Where the work is; the server adds the edits it saw itself, and takes the documents opened with
// didOpen as the open files when `openFiles` is absent. At most MAX_FOCUS_FILES entries per list.
export interface WireFocus {
  uri?: string;
  position?: WirePosition;
  // Visible files first.
  openFiles?: WireOpenFile[];
  // Newest first.
  recentEdits?: WireRecentEdit[];
}

export interface ContextForTaskParams {
  task?: string;
  options?: Record<string, unknown>;
  focus?: WireFocus;
}

export interface ContextForSymbolArguments {
  id: string;
  qualifiedName: string;
  uri: string;
}

export interface ExpandParams {
  id: string;
}

export interface WireWarning {
  code: string;
  nodeId: string | null;
  message: string;
}

export interface WireNode {
  id: string;
  kind: string;
  name: string;
  qualifiedName: string;
  language: string;
  filePath: string;
  startLine: number;
  endLine: number;
  citation: string;
  signature: string;
  doc: string;
  source: string;
  tokens: number;
  warnings: WireWarning[];
  workspaceFolder?: string;
}

export interface ReindexResult {
  filesTotal: number;
  filesParsed: number;
  filesUnchanged: number;
  filesDeleted: number;
  seconds: number;
}

export interface IndexStatus {
  state: IndexState;
  filesDone: number;
  filesTotal: number;
  pendingFiles: number;
  indexedFiles: number;
  role: IndexRole;
  message?: string;
  writerPid?: number;
  writerCommand?: string;
  undecodableCount?: number;
  undecodableNames?: string[];
  base?: string;
}

export interface WireRecentChange {
  pr: number | null;
  title: string;
  summary: string;
  commit: string;
  date: string;
  author: string;
}

export interface WireImpactTarget {
  id: string;
  citation: string;
  workspaceFolder?: string;
}

export interface WireImpactEntry {
  id: string;
  kind: string;
  qualifiedName: string;
  filePath: string;
  startLine: number;
  endLine: number;
  citation: string;
  depth: number;
  via: string;
  confidence: number;
}

export interface WireImpact {
  target: WireImpactTarget;
  depth: number;
  groups: Record<string, WireImpactEntry[]>;
  found: number;
  truncated: boolean;
}

export interface WireScoredItem {
  id: string;
  kind: string;
  name: string;
  qualifiedName: string;
  filePath: string;
  startLine: number;
  endLine: number;
  citation: string;
  score: number;
  tokens: number;
}

export interface WireLineRange {
  startLine: number;
  endLine: number;
}

export interface WireBody extends WireScoredItem {
  language: string;
  scoreParts: Record<string, number>;
  source: string;
  recentPRs: WireRecentChange[];
  leftOut: WireLineRange[];
  workspaceFolder?: string;
}

export interface WireSummary extends WireScoredItem {
  signature: string;
  doc: string;
  workspaceFolder?: string;
}

export interface WireFileMapSymbol {
  kind: string;
  qualifiedName: string;
  startLine: number;
  endLine: number;
}

export interface WireFileMapEntry {
  filePath: string;
  score: number;
  reason: string;
  symbols: WireFileMapSymbol[];
  tokens: number;
  workspaceFolder?: string;
}

export interface WireSubgraphEdge {
  from: string;
  to: string;
  kind: string;
}

export interface WireSubgraph {
  nodes: string[];
  edges: WireSubgraphEdge[];
}

export interface WireFreshness {
  indexedFiles: number;
  pendingFiles: number;
  lastUpdate: string | null;
  gitHead: string | null;
  dirty: boolean | null;
}

export interface WirePackMetadata {
  // The tokenizer that counted tokensUsed and budgetTokens.
  tokenizer: string;
  // The request's tokenScale (1 unless given) and tokenModel (null unless given).
  tokenScale: number;
  tokenModel: string | null;
  timingsMs: Record<string, number>;
  freshness: WireFreshness;
  warnings: WireWarning[];
}

export interface WireContextPack {
  taskDescription: string;
  bodies: WireBody[];
  summaries: WireSummary[];
  fileMap: WireFileMapEntry[];
  subgraph: WireSubgraph;
  tokensUsed: number;
  budgetTokens: number;
  trimmed: boolean;
  notFound: boolean;
  text: string;
  metadata: WirePackMetadata;
  impact?: WireImpact;
}

export interface WireSettings {
  indexDir?: string;
  bufferDebounceMs?: number;
  clientLogLevel?: string;
  hover?: boolean;
  contextDefaults?: Record<string, unknown>;
  exclude?: string[];
  // A postgresql:// URL; read by the server at start-up only.
  baseIndex?: string;
  // Whether that base answers for good (only the files that differ from it indexed); start-up only.
  baseIndexOnly?: boolean;
}

export const contextForTask = new lc.RequestType<ContextForTaskParams, WireContextPack, void>(
  CONTEXT_FOR_TASK,
);
export const expand = new lc.RequestType<ExpandParams, WireNode, void>(EXPAND);
export const indexStatusRequest = new lc.RequestType0<IndexStatus, void>(INDEX_STATUS);
export const indexStatusNotification = new lc.NotificationType<IndexStatus>(INDEX_STATUS);
