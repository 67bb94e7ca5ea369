-- Adds the window of past commits (schema_v1.sql's last two tables) to an index made before it.
CREATE TABLE IF NOT EXISTS past_commits (
    id INTEGER PRIMARY KEY,
    word_count INTEGER NOT NULL,
    paths TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS past_commit_words (
    word TEXT NOT NULL,
    commit_id INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (word, commit_id)
) STRICT, WITHOUT ROWID;
