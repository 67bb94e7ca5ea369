"""Git "why" breadcrumbs from real repositories built in temporary folders (issue #5).

Each test writes a small history with fixed dates (squash merges, merge commits, plain commits,
renames, moves, commits after a cutoff, a shallow clone) and asks ``GitHistory`` which changes
shaped a function's current lines.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from gitrepos import Repo
from smartctx.core.history import FileSpans, HistoryAnswer, RecentChange, parse_cutoff
from smartctx.history.changes import GitHistory
from smartctx.history.messages import MAX_SUMMARY_BYTES, split_message


def function(name: str, body: list[str]) -> list[str]:
    return [f"def {name}(value):", *[f"    {line}" for line in body], ""]


def source(*functions: list[str]) -> str:
    return "\n".join(line for lines in functions for line in lines) + "\n"


def span_of(text: str, name: str) -> tuple[int, int]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {name}("))
    end = start
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    return start, end


def ask(
    repo_root: Path, path: str, name: str, cutoff: str | None = None, limit: int = 3
) -> tuple[list[RecentChange], HistoryAnswer]:
    content = (repo_root / path).read_bytes()
    start, end = span_of(content.decode(), name)
    answer = GitHistory(repo_root).recent_changes(
        [FileSpans(path, content, ((start, end),))], parse_cutoff(cutoff) if cutoff else None, limit
    )
    return list(answer.changes.get((path, start, end), ())), answer


def test_squash_merge_merge_commit_and_plain_commit_newest_first(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"]), function("other", ["return 0"])))
    first = repo.commit(
        "Add area\n\nArea is needed by the shop.\n\nSigned-off-by: Ada Author <a@example.invalid>"
    )
    repo.write(
        "calc.py",
        source(function("area", ["value = abs(value)", "return value"]), function("other", ["return 0"])),
    )
    squash = repo.commit("Accept negative sizes (#12)\n\nCo-authored-by: Bob <b@example.invalid>")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        "calc.py",
        source(
            function("area", ["value = abs(value)", "return value * value"]), function("other", ["return 0"])
        ),
    )
    side = repo.commit("Square the side\n\nThe area of a square is side times side.", author="Bob Builder")
    repo.git("checkout", "-q", "main")
    repo.write("notes.txt", "unrelated\n")
    repo.commit("Unrelated work on main")
    repo.day += 1
    repo.git(
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #34 from bob/square",
        "-m",
        "Square areas",
    )

    changes, answer = ask(repo.root, "calc.py", "area")

    assert answer.notes == ()
    assert [(c.pr, c.title, c.commit) for c in changes] == [
        (34, "Square areas", side),
        (12, "Accept negative sizes", squash),
        (None, "Add area", first),
    ]
    assert changes[0].author == "Bob Builder"
    assert changes[0].summary.startswith("Square the side")
    assert changes[1].summary == ""  # Only a trailer, which is not an explanation.
    assert changes[2].summary == "Area is needed by the shop."
    assert changes[2].date == "2024-01-02T12:00:00+00:00"


def test_limit_keeps_the_newest(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    for step in range(4):
        repo.write("calc.py", source(function("area", [f"return value + {step}"] + ["pass"] * step)))
        repo.commit(f"Step {step}")
    changes, _ = ask(repo.root, "calc.py", "area", limit=2)
    assert [c.title for c in changes] == ["Step 3", "Step 2"]


def test_a_rename_keeps_the_history(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("old_name.py", source(function("area", ["return value * 2"])))
    repo.commit("Double the area")
    repo.git("mv", "old_name.py", "geometry.py")
    repo.commit("Move area into geometry")
    changes, _ = ask(repo.root, "geometry.py", "area")
    assert [c.title for c in changes] == ["Double the area"]


def test_a_function_moved_within_its_file_keeps_its_history(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    area = function("area", ["total = value * value", "total = total + 0", "return total"])
    helper = function("helper", ["x = value + 1", "y = x * 2", "z = y - 3", "return z"])
    repo.write("calc.py", source(area, helper))
    repo.commit("Write area and helper")
    repo.write("calc.py", source(helper, area))
    repo.commit("Put helper first")
    changes, _ = ask(repo.root, "calc.py", "area")
    assert "Write area and helper" in [c.title for c in changes]


def area_with(b: str, c: str) -> str:
    return source(function("area", ["a = 1", f"b = {b}", f"c = {c}", "return a + b + c"]))


def test_nothing_after_the_cutoff_appears(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", area_with("0", "0"))
    repo.commit("Before the cutoff")
    repo.write("calc.py", area_with("2", "0"))
    repo.commit("Also before the cutoff")
    cutoff = "2024-01-03T12:00:00+00:00"
    later = []
    for step in range(3):
        repo.write("calc.py", area_with("2", str(step + 5)))
        later.append(repo.commit(f"After the cutoff {step} (#{90 + step})"))

    without, _ = ask(repo.root, "calc.py", "area", limit=10)
    changes, answer = ask(repo.root, "calc.py", "area", cutoff=cutoff, limit=10)

    assert without[0].commit == later[-1]
    assert [c.title for c in changes] == ["Also before the cutoff", "Before the cutoff"]
    limit = parse_cutoff(cutoff)
    for change in changes:
        assert datetime.fromisoformat(change.date) <= limit
        assert change.commit not in later
        assert change.pr is None
    assert answer.notes == ()


def test_a_commit_dated_before_the_cutoff_but_written_after_it_is_left_out(tmp_path: Path) -> None:
    """Clock skew: HEAD's committer date is before the cutoff, its author date after it."""
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", area_with("0", "0"))
    repo.commit("Before the cutoff")
    repo.write("calc.py", area_with("0", "7"))
    skewed = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2024-02-01T00:00:00+00:00",
        "GIT_COMMITTER_DATE": "2024-01-02T18:00:00+00:00",
    }
    subprocess.run(["git", "-C", str(repo.root), "commit", "-qam", "Skewed"], env=skewed, check=True)
    without, _ = ask(repo.root, "calc.py", "area")
    changes, _ = ask(repo.root, "calc.py", "area", cutoff="2024-01-03T00:00:00Z")
    assert [c.title for c in without] == ["Skewed", "Before the cutoff"]
    assert [c.title for c in changes] == ["Before the cutoff"]


def test_a_bare_date_cutoff_includes_that_whole_day(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"])))
    repo.commit("On the second of January")
    repo.write("calc.py", source(function("area", ["return value + 1"])))
    repo.commit("On the third of January")
    changes, _ = ask(repo.root, "calc.py", "area", cutoff="2024-01-02")
    assert [c.title for c in changes] == ["On the second of January"]


def test_a_cutoff_before_any_commit_gives_no_changes(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"])))
    repo.commit("Too late")
    changes, answer = ask(repo.root, "calc.py", "area", cutoff="2020-01-01")
    assert changes == []
    assert answer.notes == ()


def test_uncommitted_lines_have_no_change_and_the_rest_keeps_its_history(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"])))
    repo.commit("Add area")
    repo.write("calc.py", source(function("area", ["value = value + 1  # still editing", "return value"])))
    changes, _ = ask(repo.root, "calc.py", "area")
    assert [c.title for c in changes] == ["Add area"]


def test_a_second_request_is_answered_from_the_cache(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    text = source(function("area", ["return value"]), function("perimeter", ["return 4 * value"]))
    repo.write("calc.py", text)
    repo.commit("Add area and perimeter")
    history = GitHistory(repo.root)
    spans = (span_of(text, "area"), span_of(text, "perimeter"))
    first = history.recent_changes([FileSpans("calc.py", text.encode(), spans)], None, 3)
    assert history.blames_run == 1
    second = history.recent_changes([FileSpans("calc.py", text.encode(), spans)], None, 3)
    assert history.blames_run == 1
    assert first == second
    edited = text.replace("4 * value", "value * 4")
    history.recent_changes([FileSpans("calc.py", edited.encode(), spans)], None, 3)
    assert history.blames_run == 2


def test_a_shallow_clone_says_what_it_cannot_see(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"]), function("other", ["return 1"])))
    repo.commit("Old history")
    repo.write("calc.py", source(function("area", ["return value"]), function("other", ["return 2"])))
    repo.commit("Recent change to other")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)],
        check=True,
        capture_output=True,
    )
    changes, answer = ask(clone, "calc.py", "area")
    assert changes == []
    assert [note.code for note in answer.notes] == ["history-shallow"]
    assert "git fetch --unshallow" in answer.notes[0].message


def test_outside_git_a_warning_and_no_crash(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "calc.py").write_text(source(function("area", ["return value"])))
    changes, answer = ask(folder, "calc.py", "area")
    assert changes == []
    assert [note.code for note in answer.notes] == ["history-unavailable"]
    assert "not inside a git repository" in answer.notes[0].message


def test_an_untracked_file_is_reported_and_others_still_answer(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    text = source(function("area", ["return value"]))
    repo.write("calc.py", text)
    repo.commit("Add area")
    repo.write("new.py", text)
    span = span_of(text, "area")
    answer = GitHistory(repo.root).recent_changes(
        [FileSpans("new.py", text.encode(), (span,)), FileSpans("calc.py", text.encode(), (span,))], None, 3
    )
    assert [c.title for c in answer.changes[("calc.py", *span)]] == ["Add area"]
    assert [note.code for note in answer.notes] == ["history-unavailable"]
    assert "new.py" in answer.notes[0].message


def test_messages_lose_trailers_and_stay_within_two_kilobytes() -> None:
    subject, summary = split_message(
        "Fix the cache (#7)\n\nWhy: entries never expired.\nCo-authored-by: Bob <b@x>\n\n"
        "Signed-off-by: Ada <a@x>\nReviewed-by: Cy <c@x>\n"
    )
    assert subject == "Fix the cache (#7)"
    assert summary == "Why: entries never expired."
    long_body = "\n".join(f"line {n} " + "x" * 60 for n in range(100))
    _, cut = split_message("Subject\n\n" + long_body)
    assert len(cut.encode()) <= MAX_SUMMARY_BYTES
    assert long_body.startswith(cut)
    assert long_body[len(cut)] == "\n"  # Cut at a line boundary.


def test_dates_are_aware_iso_strings(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("calc.py", source(function("area", ["return value"])))
    repo.commit("Add area")
    changes, _ = ask(repo.root, "calc.py", "area")
    moment = datetime.fromisoformat(changes[0].date)
    assert moment == datetime(2024, 1, 2, 12, tzinfo=timezone.utc)


def test_a_new_commit_is_seen_by_the_next_request(tmp_path: Path) -> None:
    """The cached HEAD is reused only while HEAD's reflog is unchanged."""
    repo = Repo(tmp_path / "repo")
    text = source(function("area", ["return value"]))
    repo.write("calc.py", text)
    repo.commit("Add area")
    history = GitHistory(repo.root)
    span = span_of(text, "area")
    first = history.recent_changes([FileSpans("calc.py", text.encode(), (span,))], None, 3)
    assert [c.title for c in first.changes[("calc.py", *span)]] == ["Add area"]
    edited = source(function("area", ["return value * 2"]))
    repo.write("calc.py", edited)
    repo.commit("Double it (#5)")
    second = history.recent_changes([FileSpans("calc.py", edited.encode(), (span,))], None, 3)
    assert [c.pr for c in second.changes[("calc.py", *span)]] == [5, None]
