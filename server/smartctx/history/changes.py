"""The changes that shaped a set of lines, from the local git history (issue #5).

``git blame --porcelain`` names, for each current line, the last commit that changed it; the
distinct commits of a span, newest first, are its recent changes. One blame per file covers every
span asked for in it, and its answer is cached per (file content, HEAD, cutoff revision), line by
line, so a second request for the same lines starts no blame at all.

A cutoff is honoured twice. The blame runs at the last mainline commit at or before the cutoff
(current lines mapped onto that revision's lines), so later commits are never walked; and every
commit found is checked against the cutoff by both its author and committer dates, so clock skew
cannot let a later change through either.

Blame reports only the last change of each line; a change whose lines were all rewritten later is
not listed. That is the point of a "why" breadcrumb: the changes behind the code as it is now.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from smartctx.core.history import FileSpans, HistoryAnswer, HistoryNote, RecentChange
from smartctx.history.git import GitError, run_git
from smartctx.history.messages import merge_pr, split_message, squash_pr

# Files whose per-line blame answers stay in memory; each holds a few hundred small entries.
MAX_CACHED_FILES = 1024
# Commits whose parsed messages stay in memory (a commit never changes, only ages out).
MAX_CACHED_COMMITS = 8192
# Mainline commit lists (one per revision) kept for finding the merge that brought a commit in.
MAX_CACHED_MAINLINES = 4

_BLAME_HEADER = re.compile(rb"^([0-9a-f]{40}) (\d+) (\d+)(?: \d+)?$")
_UNCOMMITTED = "0" * 40
_FIELD = "\x1f"
_RECORD = "\x1e"
_COMMIT_FORMAT = f"%H{_FIELD}%P{_FIELD}%an{_FIELD}%cI{_FIELD}%ct{_FIELD}%at{_FIELD}%B{_RECORD}"


@dataclass(frozen=True, slots=True)
class _Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    date: str
    committed_s: int
    authored_s: int
    subject: str
    summary: str


@dataclass(frozen=True, slots=True)
class _Repository:
    head: str
    head_committed_s: int
    shallow_commits: frozenset[str]


class _Unavailable(Exception):
    """The workspace has no usable history; the message is the pack warning's text."""


class GitHistory:
    """Recent changes of line spans in one workspace, read from its git history and cached.

    Safe to share between threads: one lock serialises lookups, which also keeps two requests from
    blaming the same file at once.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._lines: OrderedDict[tuple[str, str, str], dict[int, str | None]] = OrderedDict()
        self._commits: OrderedDict[str, _Commit] = OrderedDict()
        self._cutoff_revisions: dict[tuple[str, int], str | None] = {}
        self._mainlines: OrderedDict[str, tuple[list[str], frozenset[str]]] = OrderedDict()
        self._merges: dict[tuple[str, str], tuple[int, str, int] | None] = {}
        self._repository: _Repository | None = None
        self._git_dir: Path | None = None
        self._marker: tuple[int, int, int, int] | None = None
        # How many times a blame ran: a request answered from the cache leaves it unchanged.
        self.blames_run = 0

    def recent_changes(
        self, files: Sequence[FileSpans], cutoff: datetime | None, limit: int
    ) -> HistoryAnswer:
        """Up to ``limit`` changes per span, newest first, none after ``cutoff``."""
        with self._lock:
            try:
                return self._recent_changes(files, cutoff, limit)
            except _Unavailable as error:
                return HistoryAnswer({}, (HistoryNote("history-unavailable", str(error)),))

    def _recent_changes(
        self, files: Sequence[FileSpans], cutoff: datetime | None, limit: int
    ) -> HistoryAnswer:
        repository = self._open()
        cutoff_s = int(cutoff.timestamp()) if cutoff is not None else None
        revision: str | None = repository.head
        if cutoff_s is not None and repository.head_committed_s > cutoff_s:
            revision = self._revision_at(repository.head, cutoff_s)
        notes: dict[HistoryNote, None] = {}
        found: dict[tuple[str, int, int], tuple[RecentChange, ...]] = {}
        line_commits: dict[tuple[str, int, int], list[str]] = {}
        for query in files:
            if revision is None:
                # Nothing in the history is as old as the cutoff.
                found.update({(query.path, start, end): () for start, end in query.spans})
                continue
            try:
                commits = self._blame(query, repository.head, revision)
            except GitError as error:
                notes[HistoryNote("history-unavailable", f"no history for {query.path}: {error}")] = None
                continue
            for start, end in query.spans:
                line_commits[(query.path, start, end)] = _newest_first_order(
                    commits.get(line) for line in range(start, end + 1)
                )
        wanted = {sha for shas in line_commits.values() for sha in shas}
        self._load_commits(wanted)
        for key, shas in line_commits.items():
            changes: list[RecentChange] = []
            seen_prs: set[int] = set()
            for sha in sorted(shas, key=lambda sha: (-self._commits[sha].committed_s, sha)):
                commit = self._commits[sha]
                if sha in repository.shallow_commits:
                    notes[_shallow_note(commit)] = None
                    continue
                if cutoff_s is not None and max(commit.committed_s, commit.authored_s) > cutoff_s:
                    continue
                change = self._change(commit, revision or repository.head, cutoff_s)
                if change.pr is not None:
                    if change.pr in seen_prs:
                        continue
                    seen_prs.add(change.pr)
                changes.append(change)
                if len(changes) == limit:
                    break
            found[key] = tuple(changes)
        return HistoryAnswer(found, tuple(notes))

    def _open(self) -> _Repository:
        """HEAD and what the clone cannot see. Asked of git only when HEAD may have moved: every
        move of HEAD (commit, checkout, reset, merge) appends to its reflog, so while the reflog's
        stat is unchanged the last answer stands and a warm request starts no process."""
        marker = self._head_marker()
        if marker is not None and marker == self._marker and self._repository is not None:
            return self._repository
        try:
            head, committed = run_git(self.root, ["log", "-1", "--format=%H %ct", "HEAD"]).decode().split()
        except GitError as error:
            if "not a git repository" in str(error):
                raise _Unavailable(f"{self.root} is not inside a git repository: no history") from None
            if "does not have any commits" in str(error) or "unknown revision" in str(error):
                raise _Unavailable(f"{self.root} has no commits yet: no history") from None
            raise _Unavailable(f"git history unavailable: {error}") from None
        if self._repository is not None and self._repository.head == head:
            return self._repository
        shallow = run_git(self.root, ["rev-parse", "--is-shallow-repository"]).decode().strip() == "true"
        shallow_commits: frozenset[str] = frozenset()
        if shallow:
            shallow_file = Path(run_git(self.root, ["rev-parse", "--git-path", "shallow"]).decode().strip())
            if not shallow_file.is_absolute():
                shallow_file = self.root / shallow_file
            try:
                shallow_commits = frozenset(shallow_file.read_text().split())
            except OSError:
                shallow_commits = frozenset()
        self._repository = _Repository(head, int(committed), shallow_commits)
        self._marker = marker
        return self._repository

    def _head_marker(self) -> tuple[int, int, int, int] | None:
        """The stat of HEAD and of its reflog, or None when there is no reflog to watch."""
        if self._git_dir is None:
            try:
                self._git_dir = Path(run_git(self.root, ["rev-parse", "--absolute-git-dir"]).decode().strip())
            except GitError:
                return None
        try:
            head = (self._git_dir / "HEAD").stat()
            log = (self._git_dir / "logs" / "HEAD").stat()
        except OSError:
            return None
        return (head.st_mtime_ns, head.st_size, log.st_mtime_ns, log.st_size)

    def _revision_at(self, head: str, cutoff_s: int) -> str | None:
        """The last mainline commit committed at or before the cutoff, or None if none is."""
        key = (head, cutoff_s)
        if key not in self._cutoff_revisions:
            output = run_git(
                self.root, ["rev-list", "-1", "--first-parent", f"--before={cutoff_s}", head]
            ).decode()
            self._cutoff_revisions[key] = output.strip() or None
        return self._cutoff_revisions[key]

    def _blame(self, query: FileSpans, head: str, revision: str) -> dict[int, str | None]:
        """The last commit of each asked-for current line (None: uncommitted or newer than the
        cutoff), blaming only lines not already cached for this content and revision."""
        digest = hashlib.sha1(query.content).hexdigest()
        key = (query.path, digest, revision)
        cached = self._lines.get(key)
        if cached is None:
            cached = {}
            self._lines[key] = cached
            while len(self._lines) > MAX_CACHED_FILES:
                self._lines.popitem(last=False)
        self._lines.move_to_end(key)
        line_count = query.content.count(b"\n") + (0 if query.content.endswith(b"\n") else 1)
        needed = sorted(
            {
                line
                for start, end in query.spans
                for line in range(start, min(end, line_count) + 1)
                if line not in cached
            }
        )
        if not needed:
            return cached
        self.blames_run += 1
        if revision == head:
            # Blame the content as packed (it may hold unsaved or uncommitted edits) against HEAD.
            arguments = ["blame", "--porcelain", "-M", *_line_ranges(needed), "--contents", "-"]
            blamed = _parse_blame(run_git(self.root, [*arguments, "--", query.path], stdin=query.content))
            cached.update({line: blamed.get(line) for line in needed})
            return cached
        old_lines = self._old_line_numbers(query, revision, needed)
        blamed_old: dict[int, str | None] = {}
        if old_lines:
            ranges = _line_ranges(sorted(set(old_lines.values())))
            blamed_old = _parse_blame(
                run_git(self.root, ["blame", "--porcelain", "-M", *ranges, revision, "--", query.path])
            )
        cached.update({line: blamed_old.get(old_lines.get(line, 0)) for line in needed})
        return cached

    def _old_line_numbers(self, query: FileSpans, revision: str, needed: list[int]) -> dict[int, int]:
        """Current line → the same line in the file at ``revision``, for lines unchanged since."""
        try:
            old = run_git(self.root, ["cat-file", "blob", f"{revision}:./{query.path}"])
        except GitError:
            # The file did not exist at the cutoff under this name: no change before it touched it.
            return {}
        matcher = difflib.SequenceMatcher(None, old.splitlines(), query.content.splitlines(), autojunk=False)
        wanted = set(needed)
        mapping: dict[int, int] = {}
        for old_start, new_start, size in matcher.get_matching_blocks():
            for offset in range(size):
                line = new_start + offset + 1
                if line in wanted:
                    mapping[line] = old_start + offset + 1
        return mapping

    def _load_commits(self, shas: Iterable[str]) -> None:
        missing = sorted(sha for sha in shas if sha not in self._commits)
        if missing:
            output = run_git(
                self.root, ["log", "--no-walk=unsorted", f"--format={_COMMIT_FORMAT}", *missing]
            ).decode("utf-8", "replace")
            for record in output.split(_RECORD):
                commit = _parse_commit(record)
                if commit is not None:
                    self._commits[commit.sha] = commit
        for sha in shas:
            if sha in self._commits:
                self._commits.move_to_end(sha)
        while len(self._commits) > MAX_CACHED_COMMITS:
            self._commits.popitem(last=False)

    def _change(self, commit: _Commit, revision: str, cutoff_s: int | None) -> RecentChange:
        """The commit as a change: its pull request, when its title or a merge names one."""
        number = squash_pr(commit.subject) or merge_pr(commit.subject)
        title = commit.subject
        if number is not None:
            title = _SQUASH_SUFFIX.sub("", title) if squash_pr(commit.subject) else title
            if merge_pr(commit.subject) is not None:
                title, _, _ = commit.summary.partition("\n")
                title = title or commit.subject
            return RecentChange(number, title, commit.summary, commit.sha, commit.date, commit.author)
        merged = self._merge_of(commit.sha, revision)
        if merged is not None and (cutoff_s is None or merged[2] <= cutoff_s):
            number, pr_title, _ = merged
            summary = commit.summary if pr_title == commit.subject else _join(commit.subject, commit.summary)
            return RecentChange(number, pr_title, summary, commit.sha, commit.date, commit.author)
        return RecentChange(None, title, commit.summary, commit.sha, commit.date, commit.author)

    def _merge_of(self, sha: str, revision: str) -> tuple[int, str, int] | None:
        """(PR number, PR title, merge time) of the ``Merge pull request`` commit that brought a
        side-branch commit into the mainline of ``revision``, or None (a mainline commit, or a
        merge without a PR number)."""
        key = (sha, revision)
        if key in self._merges:
            return self._merges[key]
        mainline, on_mainline = self._mainline(revision)
        answer: tuple[int, str, int] | None = None
        if sha not in on_mainline:
            # Along the mainline (newest first) "has sha as an ancestor" holds for a prefix: find
            # its oldest member by bisection, one ancestry test per step.
            low, high = 0, len(mainline) - 1
            if self._is_ancestor(sha, mainline[0]):
                while low < high:
                    middle = (low + high + 1) // 2
                    if self._is_ancestor(sha, mainline[middle]):
                        low = middle
                    else:
                        high = middle - 1
                self._load_commits([mainline[low]])
                merge = self._commits[mainline[low]]
                number = merge_pr(merge.subject)
                if number is not None and len(merge.parents) > 1:
                    title = merge.summary.partition("\n")[0] or merge.subject
                    answer = (number, title, max(merge.committed_s, merge.authored_s))
        self._merges[key] = answer
        return answer

    def _mainline(self, revision: str) -> tuple[list[str], frozenset[str]]:
        """The first-parent chain of ``revision``, newest first, and the same as a set."""
        if revision not in self._mainlines:
            chain = run_git(self.root, ["rev-list", "--first-parent", revision]).decode().split()
            self._mainlines[revision] = (chain, frozenset(chain))
            while len(self._mainlines) > MAX_CACHED_MAINLINES:
                self._mainlines.popitem(last=False)
        self._mainlines.move_to_end(revision)
        return self._mainlines[revision]

    def _is_ancestor(self, sha: str, descendant: str) -> bool:
        try:
            run_git(self.root, ["merge-base", "--is-ancestor", sha, descendant])
        except GitError:
            return False
        return True


_SQUASH_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")


def _join(subject: str, summary: str) -> str:
    return f"{subject}\n\n{summary}" if summary else subject


def _shallow_note(commit: _Commit) -> HistoryNote:
    return HistoryNote(
        "history-shallow",
        f"this clone is shallow: history before {commit.date[:10]} is not visible, so older changes"
        " are not listed (git fetch --unshallow shows them)",
    )


def _newest_first_order(shas: Iterable[str | None]) -> list[str]:
    """Distinct commits of a span's lines, uncommitted lines left out (sorted later by date)."""
    return sorted({sha for sha in shas if sha is not None})


def _line_ranges(lines: Sequence[int]) -> list[str]:
    """``-L start,end`` arguments covering sorted line numbers with as few ranges as possible."""
    ranges: list[str] = []
    start = previous = lines[0]
    for line in lines[1:]:
        if line != previous + 1:
            ranges += ["-L", f"{start},{previous}"]
            start = line
        previous = line
    return [*ranges, "-L", f"{start},{previous}"]


def _parse_blame(output: bytes) -> dict[int, str | None]:
    """Final line number → commit, from ``git blame --porcelain`` (None for uncommitted lines)."""
    lines: dict[int, str | None] = {}
    for row in output.splitlines():
        if row.startswith(b"\t"):
            continue
        match = _BLAME_HEADER.match(row)
        if match is not None:
            sha = match.group(1).decode()
            lines[int(match.group(3))] = None if sha == _UNCOMMITTED else sha
    return lines


def _parse_commit(record: str) -> _Commit | None:
    parts = record.strip("\n").split(_FIELD)
    if len(parts) != 7:
        return None
    sha, parents, author, date, committed, authored, message = parts
    subject, summary = split_message(message)
    return _Commit(sha, tuple(parents.split()), author, date, int(committed), int(authored), subject, summary)
