-- From schema version 2 to 3: each term's postings as one row of packed arrays (schema_pg_v3.sql says
-- why), made here from every commit's rows of postings, so that no commit has to be published again.

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

INSERT INTO smartctx.symbol_lists (commit_id, term, part, documents, ids, frequencies, norms)
SELECT commit_id, term, 0, count(*), string_agg(int4send(node_id), ''::bytea ORDER BY node_id),
    string_agg(int4send(frequency), ''::bytea ORDER BY node_id), string_agg(int4send(norm), ''::bytea ORDER BY node_id)
FROM smartctx.symbol_postings GROUP BY commit_id, term;

INSERT INTO smartctx.file_lists (commit_id, term, part, documents, ids, frequencies, norms)
SELECT commit_id, term, 0, count(*), string_agg(int4send(file_id), ''::bytea ORDER BY file_id),
    string_agg(int4send(frequency), ''::bytea ORDER BY file_id), string_agg(int4send(norm), ''::bytea ORDER BY file_id)
FROM smartctx.file_postings GROUP BY commit_id, term;

DROP TABLE smartctx.symbol_postings, smartctx.file_postings;
