-- smartctx's published indexes in PostgreSQL, schema version 4 (the version is in the file name, and
-- in smartctx.schema_version with a digest of this text, so a smartctx never writes a schema it does
-- not know). Everything lives in the schema "smartctx".
--
-- One row of "commits" per published (repository, commit); every other table holds rows of one
-- commit, keyed by its id, with the ids of the local index it was copied from (store/export.py).
-- A commit's rows are written while its "complete" is false and become visible to readers in the one
-- transaction that sets it; a reader only ever looks at complete commits. No table holds source text:
-- names, signatures, first doc paragraphs and search terms only.
--
-- No foreign keys: a commit's rows are written by bulk copy and removed by commit id (publish.py),
-- and a per-row check would slow the copy for a guarantee the writer already gives.

CREATE SCHEMA IF NOT EXISTS smartctx;

CREATE TABLE smartctx.schema_version (
    version integer PRIMARY KEY,
    digest text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE smartctx.repositories (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    identity text NOT NULL UNIQUE       -- host/path of the origin remote, or the name given
);

CREATE TABLE smartctx.commits (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repository_id bigint NOT NULL,
    sha text NOT NULL,
    complete boolean NOT NULL DEFAULT false,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    completed_at timestamptz,
    smartctx_version text NOT NULL,
    shard_count integer,                -- published in this many shards, then finished; none: in one process
    UNIQUE (repository_id, sha)
);
CREATE INDEX commits_newest ON smartctx.commits (repository_id, completed_at DESC) WHERE complete;

-- The shards of a commit published in parts (--shard I/N): a row per shard whose rows are all written,
-- in the one transaction that wrote them. The finish step resolves the references once every shard
-- of the commit has its row.
CREATE TABLE smartctx.shards (
    commit_id bigint NOT NULL,
    shard integer NOT NULL,             -- from 0
    smartctx_version text NOT NULL,
    files integer NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (commit_id, shard)
);

CREATE TABLE smartctx.files (
    commit_id bigint NOT NULL,
    file_id integer NOT NULL,
    path text NOT NULL,                 -- repository-relative, POSIX separators
    language text NOT NULL,
    size_bytes bigint NOT NULL,
    content_hash text NOT NULL,         -- blake2b-128 hex of the bytes: an editor's differing file is overlaid
    line_count integer NOT NULL,
    has_errors boolean NOT NULL,
    PRIMARY KEY (commit_id, file_id)
);
CREATE UNIQUE INDEX files_path ON smartctx.files (commit_id, path);

CREATE TABLE smartctx.nodes (
    commit_id bigint NOT NULL,
    node_id integer NOT NULL,
    file_id integer NOT NULL,
    parent_id integer,
    kind text NOT NULL,
    name text NOT NULL,
    qualified_name text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    signature text NOT NULL,
    doc text NOT NULL,
    content_hash text NOT NULL,
    PRIMARY KEY (commit_id, node_id)
);
CREATE INDEX nodes_file ON smartctx.nodes (commit_id, file_id);
CREATE INDEX nodes_name ON smartctx.nodes (commit_id, name);

CREATE TABLE smartctx.scores (
    commit_id bigint NOT NULL,
    node_id integer NOT NULL,
    pagerank double precision NOT NULL,
    usage double precision NOT NULL,
    PRIMARY KEY (commit_id, node_id)
);

CREATE TABLE smartctx.edges (
    commit_id bigint NOT NULL,
    src_id integer NOT NULL,
    dst_id integer NOT NULL,
    kind text NOT NULL,
    confidence double precision NOT NULL,
    ref_id integer                      -- the reference it was resolved from; none for contains-edges
);
CREATE INDEX edges_src ON smartctx.edges (commit_id, src_id);
CREATE INDEX edges_dst ON smartctx.edges (commit_id, dst_id);
-- An editor's overlay asks which edges came from the references it resolves again (team/overlay.py).
CREATE INDEX edges_ref ON smartctx.edges (commit_id, ref_id);

-- Every reference as parsed, resolved or not: an editor's overlay resolves its own references against
-- the base, and the base's references into a file it overlays again.
CREATE TABLE smartctx.refs (
    commit_id bigint NOT NULL,
    ref_id integer NOT NULL,
    file_id integer NOT NULL,
    source_id integer NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    key text NOT NULL,
    line integer NOT NULL,
    PRIMARY KEY (commit_id, ref_id)
);
CREATE INDEX refs_key ON smartctx.refs (commit_id, key);
-- An overlay reads the references of the files whose imports it points elsewhere.
CREATE INDEX refs_file ON smartctx.refs (commit_id, file_id);

CREATE TABLE smartctx.folded (
    commit_id bigint NOT NULL,
    file_id integer NOT NULL,
    holder_id integer NOT NULL,
    name text NOT NULL,
    line integer NOT NULL
);
CREATE INDEX folded_name ON smartctx.folded (commit_id, name);

-- What lexical search needs, for BM25 as the local engine scores it (store/lexical.py): for each term,
-- the definitions (and the files) holding it, each with the term's frequency in its weighted words and
-- its length as the local engine scores it ("norm", tantivy's one-byte bucket of the length:
-- postings.py). A term's list is one row of three packed arrays of 32-bit big-endian integers
-- (PostgreSQL's int4send), in document id order: an editor reads a term's whole list with one index
-- lookup and scores it itself, where summing one row per posting in SQL took 5 to 10 times as long
-- and 5 to 11 times the space (team/lexical.py, bench/HISTORY.md). A commit published in shards has
-- a row per term and shard ("part"); a reader joins them. The lengths tables give the exact average.
CREATE TABLE smartctx.symbol_lists (
    commit_id bigint NOT NULL,
    term text NOT NULL,
    part integer NOT NULL,
    documents integer NOT NULL,
    ids bytea NOT NULL,
    frequencies bytea NOT NULL,
    norms bytea NOT NULL,
    PRIMARY KEY (commit_id, term, part) INCLUDE (documents)
);

CREATE TABLE smartctx.symbol_lengths (
    commit_id bigint NOT NULL,
    node_id integer NOT NULL,
    length integer NOT NULL,
    PRIMARY KEY (commit_id, node_id)
);

CREATE TABLE smartctx.file_lists (
    commit_id bigint NOT NULL,
    term text NOT NULL,
    part integer NOT NULL,
    documents integer NOT NULL,
    ids bytea NOT NULL,
    frequencies bytea NOT NULL,
    norms bytea NOT NULL,
    PRIMARY KEY (commit_id, term, part) INCLUDE (documents)
);

CREATE TABLE smartctx.file_lengths (
    commit_id bigint NOT NULL,
    file_id integer NOT NULL,
    length integer NOT NULL,
    PRIMARY KEY (commit_id, file_id)
);
