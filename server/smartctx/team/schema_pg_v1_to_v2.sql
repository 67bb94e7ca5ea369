-- From schema version 1 to 2: commits published in shards (schema_pg_v2.sql says what each part is).
-- Every published commit is kept: version 1 wrote only commits published in one process.

ALTER TABLE smartctx.commits ADD COLUMN shard_count integer;

CREATE TABLE smartctx.shards (
    commit_id bigint NOT NULL,
    shard integer NOT NULL,
    smartctx_version text NOT NULL,
    files integer NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (commit_id, shard)
);
