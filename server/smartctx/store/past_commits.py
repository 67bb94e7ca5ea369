"""The index's window of past commits: each one's message words and the files it changed.

A task often reads like the message of an earlier change to the same code ("Fixed #30127 -- Made
QuerySet.bulk_create() …"), so the files that past commits with similar messages changed are evidence
of where a task's change goes, evidence that lies nowhere in the code's text (the *similar commits*
signal of ``retrieval/similar_commits.py``). The indexer writes the window from git
(``indexing/past_commits.py``); readers ask for the postings of a task's words and the files of the
best commits. An index written before the window existed, or outside git, has none: every reader
then answers with no commits, and the signal is 0.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

# The meta key that says which commit the window ends at (and by which rules it was read); absent
# while an index has no window.
PAST_COMMITS_KEY = "past_commits"
_PATH_SEPARATOR = "\n"


@dataclass(frozen=True)
class PastCommit:
    """One commit of the window: its message's search words, secrets cut out, and the files it
    changed (workspace-relative)."""

    words: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class CommitPostings:
    """What BM25 over the window needs for some words: each word's (commit, occurrences) pairs,
    the word count of every commit in them, and the window's size and average message length."""

    postings: Mapping[str, Sequence[tuple[int, int]]] = field(default_factory=dict)
    lengths: Mapping[int, int] = field(default_factory=dict)
    commits: int = 0
    average_length: float = 0.0


NO_COMMITS = CommitPostings()


class PastCommitWindow:
    """A window held in memory (the overlay on a team's base keeps its local index's window so):
    the same answers as the index's tables."""

    def __init__(self, rows: Iterable[tuple[int, str, tuple[str, ...]]]) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: dict[int, int] = {}
        self._paths: dict[int, tuple[str, ...]] = {}
        for commit_id, words, paths in rows:
            counts = Counter(words.split())
            self._lengths[commit_id] = sum(counts.values())
            self._paths[commit_id] = paths
            for word, count in counts.items():
                self._postings.setdefault(word, []).append((commit_id, count))

    @classmethod
    def of(cls, commits: Iterable[PastCommit]) -> PastCommitWindow:
        """The window of these commits, newest first."""
        return cls((commit_id, commit.words, commit.paths) for commit_id, commit in enumerate(commits))

    def postings(self, words: Iterable[str]) -> CommitPostings:
        if not self._lengths:
            return NO_COMMITS
        found = {word: self._postings[word] for word in words if word in self._postings}
        lengths = {commit_id: self._lengths[commit_id] for pairs in found.values() for commit_id, _ in pairs}
        average = sum(self._lengths.values()) / len(self._lengths)
        return CommitPostings(found, lengths, len(self._lengths), average)

    def paths(self, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        return {commit_id: self._paths[commit_id] for commit_id in commit_ids if commit_id in self._paths}


def write_window(connection: sqlite3.Connection, stamp: str, commits: Sequence[PastCommit]) -> None:
    """Replace the window with ``commits`` (newest first) and record ``stamp``, inside the caller's
    transaction."""
    connection.execute("DELETE FROM past_commit_words")
    connection.execute("DELETE FROM past_commits")
    for commit_id, commit in enumerate(commits):
        counts = Counter(commit.words.split())
        connection.execute(
            "INSERT INTO past_commits(id, word_count, paths) VALUES (?, ?, ?)",
            (commit_id, sum(counts.values()), _PATH_SEPARATOR.join(commit.paths)),
        )
        connection.executemany(
            "INSERT INTO past_commit_words(word, commit_id, count) VALUES (?, ?, ?)",
            [(word, commit_id, count) for word, count in counts.items()],
        )
    connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (PAST_COMMITS_KEY, stamp))


def read_postings(connection: sqlite3.Connection, words: Iterable[str]) -> CommitPostings:
    """The postings of ``words`` in the window of the index on ``connection``."""
    if connection.execute("SELECT 1 FROM meta WHERE key = ?", (PAST_COMMITS_KEY,)).fetchone() is None:
        return NO_COMMITS
    commits, total_words = connection.execute(
        "SELECT count(*), total(word_count) FROM past_commits"
    ).fetchone()
    if not commits:
        return NO_COMMITS
    unique = sorted(set(words))
    postings: dict[str, list[tuple[int, int]]] = {}
    lengths: dict[int, int] = {}
    if unique:
        marks = ",".join("?" * len(unique))
        for word, commit_id, count, length in connection.execute(
            "SELECT w.word, w.commit_id, w.count, c.word_count FROM past_commit_words w"
            f" JOIN past_commits c ON c.id = w.commit_id WHERE w.word IN ({marks})",
            unique,
        ):
            postings.setdefault(word, []).append((commit_id, count))
            lengths[commit_id] = length
    return CommitPostings(postings, lengths, int(commits), float(total_words) / int(commits))


def read_paths(connection: sqlite3.Connection, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
    """The files each of these commits changed."""
    ids = sorted(set(commit_ids))
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        commit_id: tuple(paths.split(_PATH_SEPARATOR)) if paths else ()
        for commit_id, paths in connection.execute(
            f"SELECT id, paths FROM past_commits WHERE id IN ({marks})", ids
        )
    }


def read_window(connection: sqlite3.Connection) -> PastCommitWindow:
    """The whole window, in memory (for an overlay, whose local index is small beside it)."""
    if connection.execute("SELECT 1 FROM meta WHERE key = ?", (PAST_COMMITS_KEY,)).fetchone() is None:
        return PastCommitWindow(())
    paths = {
        commit_id: tuple(text.split(_PATH_SEPARATOR)) if text else ()
        for commit_id, text in connection.execute("SELECT id, paths FROM past_commits")
    }
    words: dict[int, list[str]] = {commit_id: [] for commit_id in paths}
    for word, commit_id, count in connection.execute("SELECT word, commit_id, count FROM past_commit_words"):
        words.setdefault(commit_id, []).extend([word] * count)
    return PastCommitWindow((commit_id, " ".join(words[commit_id]), paths[commit_id]) for commit_id in paths)
