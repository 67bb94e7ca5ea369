"""The commit dev set's task rules (bench/quality/commit_tasks.py) on a real git repository built here."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from bench.quality import commit_tasks as commit_tasks_module
from gitrepos import Repo

CORE = """package core

func Alpha() int {
	return 1
}

func Beta(x int) int {
	return x
}
"""


@pytest.fixture(scope="module")
def commit_tasks() -> ModuleType:
    return commit_tasks_module


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small Go project whose history holds one commit of each kind the rules tell apart."""
    repo = Repo(tmp_path_factory.mktemp("devset") / "tool")
    repo.write("core/core.go", CORE)
    repo.write("core/core_test.go", "package core\n")
    repo.write("README.md", "# tool\n")
    shas = {"base": repo.commit("Start the tool with Alpha and Beta")}
    repo.write("core/core_test.go", "package core\n\nfunc TestAlpha(t *testing.T) {}\n")
    shas["tests"] = repo.commit("Cover Alpha with a first unit test")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("README.md", "# tool\n\nA tool.\n")
    shas["feature"] = repo.commit("Describe what the tool is for in the readme")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "Merge the feature branch into main after review")
    shas["merge"] = repo.git("rev-parse", "HEAD")
    # Two lines go in above Beta, so Beta's `return x` is line 8 in the parent and line 10 after.
    repo.write(
        "core/core.go",
        CORE.replace("func Beta", "// Beta doubles.\n//\nfunc Beta").replace("return x", "return 2 * x"),
    )
    shas["shifted"] = repo.commit("Make Beta return twice its argument")
    # A pure addition: one line after Alpha's `func Alpha() int {` (line 3 of the parent).
    repo.write(
        "core/core.go",
        repo.root.joinpath("core/core.go")
        .read_text()
        .replace("int {\n\treturn 1", "int {\n\tlog()\n\treturn 1"),
    )
    shas["addition"] = repo.commit("Log every call that is made to Alpha")
    return {"repo": repo, "shas": shas}


def selected(commit_tasks: ModuleType, history: dict[str, Any]) -> Any:
    repo: Repo = history["repo"]
    head = history["shas"]["addition"]
    dev_repo = commit_tasks.DevRepo("acme/tool", "go", head)
    return commit_tasks.select_tasks(dev_repo, repo.root / ".git", per_repo=10)


def test_only_changes_of_the_program_become_tasks(commit_tasks: ModuleType, history: dict[str, Any]) -> None:
    selection = selected(commit_tasks, history)
    shas = history["shas"]
    assert [task["commit"] for task in selection.tasks] == [shas["addition"], shas["shifted"]]
    assert selection.skipped == {
        "merge": 1,
        "tests-only": 1,
        "no-source": 1,  # the readme change on the merged branch
        "root": 1,
    }


def test_gold_lines_are_in_the_parents_numbering(commit_tasks: ModuleType, history: dict[str, Any]) -> None:
    task = next(
        task for task in selected(commit_tasks, history).tasks if task["commit"] == history["shas"]["shifted"]
    )
    assert task["base_commit"] == history["shas"]["merge"]
    assert task["problem_statement"] == "Make Beta return twice its argument"
    assert task["gold_files"] == ["core/core.go"]
    # The comment lines are a pure addition anchored on lines 6-7; `return x` is line 8 of the parent.
    assert task["gold_changed"] == [["core/core.go", 6, 7], ["core/core.go", 8, 8]]
    assert task["gold_functions"] == ["core/core.go::<module>", "core/core.go::Beta"]


def test_a_pure_addition_is_anchored_on_its_neighbours(
    commit_tasks: ModuleType, history: dict[str, Any]
) -> None:
    task = next(
        task
        for task in selected(commit_tasks, history).tasks
        if task["commit"] == history["shas"]["addition"]
    )
    assert task["gold_changed"] == [["core/core.go", 3, 4]]
    assert task["gold_functions"] == ["core/core.go::Alpha"]


def test_editor_history_never_includes_the_task(commit_tasks: ModuleType, history: dict[str, Any]) -> None:
    repo: Repo = history["repo"]
    task = next(
        task
        for task in selected(commit_tasks, history).tasks
        if task["commit"] == history["shas"]["addition"]
    )
    previous = commit_tasks.previous_author_commits(repo.root / ".git", task, limit=2)
    assert [commit.sha for commit in previous] == [history["shas"]["shifted"], history["shas"]["feature"]]
    assert previous[0].files == ("core/core.go",)
    recent = commit_tasks.commits_before(repo.root / ".git", task, window_hours=36)
    assert [commit.sha for commit in recent] == [history["shas"]["shifted"]]


def started_tool(tmp_path_factory: pytest.TempPathFactory, name: str) -> Repo:
    """A Go tool whose first commit holds Alpha and Beta, for a set's message rule to choose from."""
    repo = Repo(tmp_path_factory.mktemp(name) / "tool")
    repo.write("core/core.go", CORE)
    repo.commit("Start the tool with Alpha and Beta")
    return repo


def selected_by(commit_tasks: ModuleType, repo: Repo, set_name: str | None) -> Any:
    """The tasks a set's message rule selects from ``repo``; every task with no set named."""
    dev_repo = commit_tasks.DevRepo("acme/tool", "go", repo.git("rev-parse", "HEAD"))
    rule = commit_tasks.MESSAGE_RULES[set_name] if set_name else commit_tasks.MessageRule()
    return commit_tasks.select_tasks(dev_repo, repo.root / ".git", per_repo=10, rule=rule)


def test_the_traceback_set_takes_only_commits_that_quote_a_traceback(
    commit_tasks: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = started_tool(tmp_path_factory, "tracebacks")
    repo.write("core/core.go", CORE.replace("return x", "return 2 * x"))
    crash = repo.commit(
        "Fix a crash in Beta on large input\n\n"
        "Traceback (most recent call last):\n"
        '  File "tool/run.py", line 3, in <module>\n'
        "OverflowError: int too large\n"
    )
    repo.write("core/core.go", CORE.replace("return 1", "return 3"))
    repo.commit("Make Alpha return three instead of one")
    chosen = selected_by(commit_tasks, repo, "tracebacks")
    assert [task["commit"] for task in chosen.tasks] == [crash]
    assert "Traceback (most recent call last)" in chosen.tasks[0]["problem_statement"]
    every = selected_by(commit_tasks, repo, None)
    assert len(every.tasks) == 2


def test_the_described_set_takes_only_messages_of_an_issues_length(
    commit_tasks: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = started_tool(tmp_path_factory, "described")
    repo.write("core/core.go", CORE.replace("return x", "return 2 * x"))
    body = (
        "Beta returned its input unchanged, so every caller that sized a buffer from it allocated half"
        " of what the frame needs and the decoder read past the end on the second frame. Double it"
        " where it is computed, not in each caller, and keep Alpha as it is: its callers count frames, and"
        " a count must not double."
    )
    described = repo.commit(f"Make Beta double its input\n\n{body}\n\nSigned-off-by: A Dev <a@example.com>")
    repo.write("core/core.go", CORE.replace("return 1", "return 3"))
    repo.commit("Make Alpha return three instead of one\n\n" + "Signed-off-by: A Dev <a@example.com>\n" * 12)
    chosen = selected_by(commit_tasks, repo, "train-described")
    # The trailers do not count: the newest commit is long only by its sign-offs.
    assert [task["commit"] for task in chosen.tasks] == [described]
    assert chosen.skipped["undescribed"] == 1
    assert len(chosen.tasks[0]["problem_statement"]) >= commit_tasks.DESCRIBED_MIN_CHARS


def test_the_changelog_set_takes_the_entry_a_commit_adds_as_its_task(
    commit_tasks: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = Repo(tmp_path_factory.mktemp("changelog") / "tool")
    repo.write("core/core.go", CORE)
    repo.write("CHANGES.md", "# Changes\n\n## Unreleased\n")
    repo.commit("Start the tool with Alpha and Beta")
    repo.write("core/core.go", CORE.replace("return x", "return 2 * x"))
    repo.write(
        "CHANGES.md",
        "# Changes\n\n## Unreleased\n\n"
        "- {func}`Beta` no longer halves the frame size on the second frame, which made the\n"
        "  decoder read past the end. {issue}`2869` {pr}`3781` -- by :user:`someone`\n",
    )
    entry = repo.commit("Double in Beta\n\nThe callers sized buffers from it.")
    repo.write("core/core.go", CORE.replace("return 1", "return 3"))
    repo.write("core/changes.go", "package core\n\n// Changes lists nothing yet.\n")
    repo.commit("Make Alpha return three and note the changes to come")
    repo.write("core/core.go", CORE.replace("return 1", "return 4"))
    repo.write("news/1234.bugfix.rst", "Alpha returns four, as :pr:`1234` says.\n")
    fragment = repo.commit("Make Alpha return four instead of one")
    repo.write("core/core.go", CORE.replace("return 1", "return 5"))
    repo.write(
        "CHANGES.md", "2026.03.06, Version 1.5.0 (Stable)\n\nChanges since version 1.4.0:\n\n* fix Alpha\n"
    )
    repo.commit("Make Alpha return five on the stable branch")
    chosen = selected_by(commit_tasks, repo, "train-changelog")
    # A source file named like a changelog is code: that commit adds no entry.
    assert [task["commit"] for task in chosen.tasks] == [fragment, entry]
    assert chosen.skipped["no-changelog"] == 1
    # A release's notes list many changes: the release is no task.
    assert chosen.skipped["release"] == 1
    assert chosen.tasks[0]["problem_statement"] == "Alpha returns four, as says."
    assert chosen.tasks[1]["problem_statement"] == (
        "Beta no longer halves the frame size on the second frame, which made the\ndecoder read past the end."
    )
    assert chosen.tasks[1]["gold_files"] == ["core/core.go"]
    # Another task than the commit message's, so another id.
    assert chosen.tasks[1]["instance_id"] == f"acme__tool-{entry[:10]}-changelog"
