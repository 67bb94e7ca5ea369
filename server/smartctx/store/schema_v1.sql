-- The smartctx index, schema version 1. The version is part of the file name (index-v1.sqlite), so a
-- later schema never reads an older file: it builds its own next to it.

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- One row per indexed file. Skipped files are not stored; the scan reports them.
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- workspace-relative, POSIX separators
    language TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL,         -- blake2b-128 hex of the bytes on disk
    line_count INTEGER NOT NULL,
    has_errors INTEGER NOT NULL,        -- 1 when tree-sitter had to recover from syntax errors
    -- 1 until this file's references are resolved. Stored, so that an interrupted batch is finished
    -- by the next run; kept per file rather than per reference, so a first index never rewrites
    -- every reference row just to clear a flag.
    refs_pending INTEGER NOT NULL DEFAULT 1
) STRICT;

-- Every definition, plus one module node per file (kind 'module', spanning the whole file).
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id),
    parent_id INTEGER REFERENCES nodes(id),
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT NOT NULL,
    content_hash TEXT NOT NULL          -- blake2b-64 hex of the node's lines, to detect stale packs
) STRICT;
CREATE INDEX nodes_file ON nodes(file_id);
CREATE INDEX nodes_name ON nodes(name);

-- Every reference as parsed, resolved or not. `key` is the name the resolver looks up: the name
-- itself, or the last component of an import path.
CREATE TABLE refs (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id),
    source_id INTEGER NOT NULL REFERENCES nodes(id),
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    line INTEGER NOT NULL
) STRICT;
CREATE INDEX refs_file ON refs(file_id);
CREATE INDEX refs_key ON refs(key);

-- Names whose set of definitions changed since references were last resolved.
CREATE TABLE dirty_names (
    name TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;

-- Resolved edges. Contains-edges (parent to child) have no ref_id; every other edge comes from one
-- reference and is replaced whenever that reference is resolved again.
CREATE TABLE edges (
    src_id INTEGER NOT NULL,
    dst_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    confidence REAL NOT NULL,
    ref_id INTEGER
) STRICT;
CREATE INDEX edges_src ON edges(src_id);
CREATE INDEX edges_dst ON edges(dst_id);
CREATE INDEX edges_ref ON edges(ref_id) WHERE ref_id IS NOT NULL;

-- Definitions nested too deep (or named too long) to be nodes of their own (parsing/extract.py folds
-- them): each one's name and line with the kept node whose text holds it, so that the index report
-- can count them and a task that names one can be told where it is.
CREATE TABLE folded (
    file_id INTEGER NOT NULL REFERENCES files(id),
    holder_id INTEGER NOT NULL REFERENCES nodes(id),
    name TEXT NOT NULL,
    line INTEGER NOT NULL
) STRICT;
CREATE INDEX folded_file ON folded(file_id);
CREATE INDEX folded_name ON folded(name);

-- Graph scores, recomputed after a batch. A node without a row scores zero until the next recompute.
CREATE TABLE scores (
    node_id INTEGER PRIMARY KEY,
    pagerank REAL NOT NULL,
    usage REAL NOT NULL
) STRICT;

-- The lexical index lives beside this file, in tantivy (store/lexical.py): BM25 over every node
-- (rowid = nodes.id) and over every file (files.id). It is derived from the rows below and carries
-- the meta value search_generation it was built or last updated at; when it holds another, it is
-- built again from them. Identifiers are pre-split into words (camelCase and snake_case) by the
-- parser workers; a node's body words are those of the lines it owns (not those of definitions
-- nested in it).
--
-- Each file's search words (rowid = files.id): its nodes' ids (int64, native order, in the order of
-- the packed rows) and, packed (see rows.py), its path's words and each node's five columns.
CREATE TABLE search_words (
    file_id INTEGER PRIMARY KEY,
    node_ids BLOB NOT NULL,
    words BLOB NOT NULL
) STRICT;

-- The window of past commits (store/past_commits.py): the last commits of the checked-out branch,
-- newest first (id 0), each with the files it changed, one a line; their messages' word counts; and
-- each word's commits with its count in each. Written whole when the checked-out commit changes; the
-- meta value past_commits names the commit it ends at.
CREATE TABLE past_commits (
    id INTEGER PRIMARY KEY,
    paths TEXT NOT NULL
) STRICT;
-- One row (id 0): every commit's word count, int32 by id, native byte order.
CREATE TABLE past_commit_lengths (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    lengths BLOB NOT NULL
) STRICT;
-- Each word's commits (int32 ids, ascending) and its count in each (int32), native byte order.
CREATE TABLE past_commit_words (
    word TEXT PRIMARY KEY,
    commit_ids BLOB NOT NULL,
    counts BLOB NOT NULL
) STRICT, WITHOUT ROWID;
