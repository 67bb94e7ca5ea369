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
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

# The meta key that says which commit the window ends at (and by which rules it was read); absent
# while an index has no window.
PAST_COMMITS_KEY = "past_commits"
_PATH_SEPARATOR = "\n"
# Commit ids and counts are stored as int32 arrays in native byte order, as the search words' ids.
_INT = np.dtype(np.int32)

IntArray = npt.NDArray[np.int32]
_NONE: IntArray = np.zeros(0, dtype=_INT)


@dataclass(frozen=True)
class PastCommit:
    """One commit of the window: its message's search words, secrets cut out, and the files it
    changed (workspace-relative)."""

    words: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class CommitPostings:
    """What BM25 over the window needs for some words: each word's commits (ids, ascending) and its
    count in each, and every commit's word count by id."""

    postings: Mapping[str, tuple[IntArray, IntArray]] = field(default_factory=dict)
    lengths: IntArray = field(default_factory=lambda: _NONE)


NO_COMMITS = CommitPostings()


class PastCommitWindow:
    """A window held in memory (an editor on a team's base reads its clone's so): the same answers as
    the index's tables."""

    def __init__(self, commits: Sequence[PastCommit]) -> None:
        rows = _rows(commits)
        self._lengths = rows.lengths
        self._postings = rows.postings
        self._paths = {commit_id: commit.paths for commit_id, commit in enumerate(commits)}

    def postings(self, words: Iterable[str]) -> CommitPostings:
        if not len(self._lengths):
            return NO_COMMITS
        return CommitPostings(
            {word: self._postings[word] for word in words if word in self._postings}, self._lengths
        )

    def paths(self, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        return {commit_id: self._paths[commit_id] for commit_id in commit_ids if commit_id in self._paths}


@dataclass(frozen=True)
class _Rows:
    lengths: IntArray
    postings: dict[str, tuple[IntArray, IntArray]]


def _rows(commits: Sequence[PastCommit]) -> _Rows:
    """The window's arrays: every commit's word count, and each word's commits and counts."""
    lengths = np.zeros(len(commits), dtype=_INT)
    ids: defaultdict[str, list[int]] = defaultdict(list)
    counts: defaultdict[str, list[int]] = defaultdict(list)
    for commit_id, commit in enumerate(commits):
        counted = Counter(commit.words.split())
        lengths[commit_id] = sum(counted.values())
        for word, count in counted.items():
            ids[word].append(commit_id)
            counts[word].append(count)
    postings = {word: (np.array(ids[word], dtype=_INT), np.array(counts[word], dtype=_INT)) for word in ids}
    return _Rows(lengths, postings)


def write_window(connection: sqlite3.Connection, stamp: str, commits: Sequence[PastCommit]) -> None:
    """Replace the window with ``commits`` (newest first) and record ``stamp``, inside the caller's
    transaction."""
    rows = _rows(commits)
    connection.execute("DELETE FROM past_commit_words")
    connection.execute("DELETE FROM past_commits")
    connection.execute("DELETE FROM past_commit_lengths")
    connection.executemany(
        "INSERT INTO past_commits(id, paths) VALUES (?, ?)",
        [(commit_id, _PATH_SEPARATOR.join(commit.paths)) for commit_id, commit in enumerate(commits)],
    )
    connection.execute(
        "INSERT INTO past_commit_lengths(id, lengths) VALUES (0, ?)", (rows.lengths.tobytes(),)
    )
    connection.executemany(
        "INSERT INTO past_commit_words(word, commit_ids, counts) VALUES (?, ?, ?)",
        [(word, ids.tobytes(), counts.tobytes()) for word, (ids, counts) in rows.postings.items()],
    )
    connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (PAST_COMMITS_KEY, stamp))


def read_postings(connection: sqlite3.Connection, words: Iterable[str]) -> CommitPostings:
    """The postings of ``words`` in the window of the index on ``connection``."""
    if connection.execute("SELECT 1 FROM meta WHERE key = ?", (PAST_COMMITS_KEY,)).fetchone() is None:
        return NO_COMMITS
    row = connection.execute("SELECT lengths FROM past_commit_lengths WHERE id = 0").fetchone()
    if row is None or not row[0]:
        return NO_COMMITS
    unique = sorted(set(words))
    postings: dict[str, tuple[IntArray, IntArray]] = {}
    if unique:
        marks = ",".join("?" * len(unique))
        for word, ids, counts in connection.execute(
            f"SELECT word, commit_ids, counts FROM past_commit_words WHERE word IN ({marks})", unique
        ):
            postings[word] = (np.frombuffer(ids, dtype=_INT), np.frombuffer(counts, dtype=_INT))
    return CommitPostings(postings, np.frombuffer(row[0], dtype=_INT))


def read_paths(connection: sqlite3.Connection, commit_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
    """The files each of these commits changed."""
    ids = sorted(set(commit_ids))
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        commit_id: _paths(text)
        for commit_id, text in connection.execute(
            f"SELECT id, paths FROM past_commits WHERE id IN ({marks})", ids
        )
    }


def _paths(text: str) -> tuple[str, ...]:
    return tuple(text.split(_PATH_SEPARATOR)) if text else ()
