"""The pinned sets of bench/quality/commit_tasks.py: the training set never holds a repository the
model is evaluated on, and ``commits.py --set`` picks a set with its own files (the dev set's
unchanged)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from bench.quality import commit_tasks as commit_tasks_module
from bench.quality import commits as commits_module

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench() -> tuple[ModuleType, ModuleType]:
    return commit_tasks_module, commits_module


def test_the_training_set_shares_no_repository_with_the_dev_set(bench: tuple[ModuleType, ModuleType]) -> None:
    commit_tasks, _ = bench
    dev = {repo.name.lower() for repo in commit_tasks.DEV_REPOS}
    train = [repo.name.lower() for repo in commit_tasks.TRAIN_REPOS]
    assert len(train) == len(set(train))
    assert not dev & set(train)
    assert commit_tasks.forbidden_for_training(commit_tasks.DEV_REPOS, Path("/nonexistent")) == [
        repo.name for repo in commit_tasks.DEV_REPOS
    ]
    # The traceback set is evaluated on too.
    assert commit_tasks.forbidden_for_training(commit_tasks.TRACEBACK_REPOS, Path("/nonexistent")) == [
        repo.name for repo in commit_tasks.TRACEBACK_REPOS
    ]
    assert not {repo.name.lower() for repo in commit_tasks.TRACEBACK_REPOS} & set(train)


def test_the_training_set_is_in_no_never_train_list(
    bench: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    commit_tasks, _ = bench
    # The shared list where it is checked out beside the repository; an absent one forbids nothing.
    assert commit_tasks.forbidden_for_training(commit_tasks.TRAIN_REPOS) == []
    listed = tmp_path / "never_train.txt"
    listed.write_text("# evaluation sets\nPallets/Click  # a comment\n\nsidekiq/sidekiq\n", encoding="utf-8")
    assert commit_tasks.never_train(listed) == {"pallets/click", "sidekiq/sidekiq"}
    assert commit_tasks.forbidden_for_training(commit_tasks.TRAIN_REPOS, listed) == [
        "pallets/click",
        "sidekiq/sidekiq",
    ]


def test_every_pinned_repository_names_a_language_and_a_full_commit(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    commit_tasks, _ = bench
    for repos in commit_tasks.REPO_SETS.values():
        for repo in repos:
            assert repo.language in commit_tasks.LANGUAGES, repo
            assert len(repo.head) == 40 and int(repo.head, 16) >= 0, repo


def test_each_set_has_its_own_files(bench: tuple[ModuleType, ModuleType]) -> None:
    _, commits = bench
    dev = commits.parse_args(["run"])
    assert dev.set == "dev"
    assert dev.data == BENCH_DIR / "out" / "commit_tasks.jsonl"
    assert dev.out == BENCH_DIR / "out" / "commits.json"
    assert dev.repos_dir == Path("/work/benchrepos/devset-repos")
    assert dev.index_root == Path("/work/benchrepos/devset-index")
    train = commits.parse_args(["run", "--set", "train", "--data", "/tmp/tasks.jsonl"])
    assert train.data == Path("/tmp/tasks.jsonl")
    assert train.out == BENCH_DIR / "out" / "commits-train.json"
    assert train.repos_dir == Path("/work/benchrepos/train-repos")
    extract = commits.parse_args(["extract", "--set", "train", "--repo", "click,sidekiq/sidekiq"])
    assert [repo.name for repo in commits.selected_repos(extract)] == ["pallets/click", "sidekiq/sidekiq"]
    assert commits.parse_args(["coverage"]).coverage_out == BENCH_DIR / "out" / "commits_parser_coverage.json"


def test_the_wide_dev_set_is_apart_from_the_others(bench: tuple[ModuleType, ModuleType]) -> None:
    commit_tasks, commits = bench
    wide = [repo.name.lower() for repo in commit_tasks.DEV_WIDE_REPOS]
    assert len(wide) == len(set(wide))
    assert {repo.language for repo in commit_tasks.DEV_WIDE_REPOS} == {"rust", "typescript"}
    others = (*commit_tasks.DEV_REPOS, *commit_tasks.TRAIN_REPOS)
    assert not set(wide) & {repo.name.lower() for repo in others}
    assert not set(wide) & commit_tasks.never_train()
    # Never trained on, and the dev set's own 280 tasks keep their repositories.
    assert commit_tasks.forbidden_for_training(commit_tasks.DEV_WIDE_REPOS, Path("/nonexistent")) == [
        repo.name for repo in commit_tasks.DEV_WIDE_REPOS
    ]
    assert len(commit_tasks.DEV_REPOS) == 14
    wide_args = commits.parse_args(["run", "--set", "dev-wide"])
    assert wide_args.data == BENCH_DIR / "out" / "devwide_tasks.jsonl"
    assert wide_args.repos_dir == Path("/work/benchrepos/devwide-repos")
    assert wide_args.index_root == Path("/work/benchrepos/devwide-index")


@pytest.mark.parametrize(
    ("path", "changelog"),
    [
        ("CHANGES.rst", True),
        ("CHANGELOG.md", True),
        ("docs/HISTORY.rst", True),
        ("news/1234.bugfix.rst", True),
        ("CHANGES/9876.feature", True),
        (".changeset/brave-owls-sing.md", True),
        ("docs/build/unreleased/1842.rst", True),
        # Code and test data named like a changelog are not one.
        ("core/changes.go", False),
        ("news/models.py", False),
        ("src/__snapshots__/history.test.tsx.snap", False),
        ("README.md", False),
    ],
)
def test_a_changelog_is_told_by_its_name_or_its_folder(
    bench: tuple[ModuleType, ModuleType], path: str, changelog: bool
) -> None:
    commit_tasks, _ = bench
    assert commit_tasks.is_changelog_path(path) is changelog
