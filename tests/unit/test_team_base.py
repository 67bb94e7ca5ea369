"""Which published commit a work tree starts from, and what of the work tree is not that commit's:
asked of a real git repository."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the psycopg driver is not installed: pip install -e '.[dev]'")

from gitrepos import Repo
from smartctx.team.base import PublishedCommit, choose_base

PUBLISHED_AT = datetime(2026, 12, 1, tzinfo=timezone.utc)
# A commit some other clone published and this one never fetched.
UNFETCHED = "0123456789abcdef0123456789abcdef01234567"


def published(*shas: str) -> list[PublishedCommit]:
    return [PublishedCommit(number, sha, PUBLISHED_AT) for number, sha in enumerate(shas, 1)]


def is_source(path: str) -> bool:
    return path.endswith(".py")


def history(root: Path) -> tuple[Repo, list[str]]:
    """Three commits: two files, a third added, the first changed."""
    repo = Repo(root)
    repo.write("app/a.py", "def a():\n    return 1\n")
    repo.write("app/b.py", "def b():\n    return 2\n")
    first = repo.commit("a and b")
    repo.write("app/c.py", "def c():\n    return 3\n")
    second = repo.commit("c")
    repo.write("app/a.py", "def a():\n    return 10\n")
    third = repo.commit("a returns ten")
    return repo, [first, second, third]


def test_the_nearest_published_ancestor_is_the_base(tmp_path: Path) -> None:
    repo, (first, second, _) = history(tmp_path / "repo")
    commits = published(UNFETCHED, first, second)
    held = {first: {"app/a.py", "app/b.py"}, second: {"app/a.py", "app/b.py", "app/c.py"}}

    choice = choose_base(repo.root, commits, lambda commit: frozenset(held[commit.sha]), is_source)

    assert choice is not None
    assert choice.commit.sha == second and choice.behind == 1
    # What the third commit changed is the work tree's own.
    assert choice.changed == ("app/a.py",) and choice.deleted == ()
    assert choice.stamp() == f"base {second[:7]} + 1 local file"


def test_an_unfetched_or_unrelated_commit_is_no_base(tmp_path: Path) -> None:
    repo, _ = history(tmp_path / "repo")
    other, _ = history(tmp_path / "other")
    other.write("app/d.py", "def d():\n    return 4\n")
    unrelated = other.commit("d")

    assert choose_base(repo.root, published(UNFETCHED, unrelated), lambda c: frozenset(), is_source) is None


def test_edits_deletions_and_new_source_files_are_local_and_nothing_else_is(tmp_path: Path) -> None:
    repo, (*_, third) = history(tmp_path / "repo")
    (repo.root / "app" / "b.py").write_text("def b():\n    return 20\n")
    (repo.root / "app" / "c.py").unlink()
    (repo.root / "app" / "new.py").write_text("def new():\n    return 5\n")
    (repo.root / "notes.txt").write_text("not source\n")
    (repo.root / ".gitignore").write_text("build/\n")
    (repo.root / "build").mkdir()
    (repo.root / "build" / "generated.py").write_text("x = 1\n")
    held = frozenset({"app/a.py", "app/b.py", "app/c.py"})

    choice = choose_base(repo.root, published(third), lambda c: held, is_source)

    assert choice is not None and choice.behind == 0
    assert choice.changed == ("app/b.py", "app/new.py")
    assert choice.deleted == ("app/c.py",)
    assert choice.stamp() == f"base {third[:7]} + 3 local files"
