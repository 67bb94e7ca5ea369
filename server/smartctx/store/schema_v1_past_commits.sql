-- Adds the window of past commits (schema_v1.sql's last three tables) to an index made before it.
CREATE TABLE IF NOT EXISTS past_commits (
    id INTEGER PRIMARY KEY,
    paths TEXT NOT NULL
) STRICT;
-- One row (id 0): every commit's word count, int32 by id, native byte order.
CREATE TABLE IF NOT EXISTS past_commit_lengths (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    lengths BLOB NOT NULL
) STRICT;
-- Each word's commits (int32 ids, ascending) and its count in each (int32), native byte order.
CREATE TABLE IF NOT EXISTS past_commit_words (
    word TEXT PRIMARY KEY,
    commit_ids BLOB NOT NULL,
    counts BLOB NOT NULL
) STRICT, WITHOUT ROWID;
