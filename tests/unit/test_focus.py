"""Editor focus from the wire and from the server's own memory: what a request ends up focused on."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from smartctx.core.context import MAX_FOCUS_FILES, ContextOptions, Focus, InvalidRequestError, RecentEdit
from smartctx.live.edits import (
    EDIT_MEMORY_S,
    MAX_REMEMBERED_EDITS,
    MAX_SAVE_BATCH_FILES,
    EditMemory,
    with_editor_memory,
)
from smartctx.lsp.convert import context_requests, ignored_fields
from smartctx.lsp.protocol import UNKNOWN_FIELD_WARNING

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)
ROOTS = (Path("/w/app"), Path("/w/lib"))


def focus_of(raw: Any) -> list[Focus]:
    """The focus of each folder's request for ``raw`` sent as contextForTask's ``focus``."""
    requests = context_requests({"task": "x", "focus": raw}, ROOTS, ContextOptions(), NOW)
    return [request.focus for request in requests]


def test_open_files_and_recent_edits_land_in_their_own_folder() -> None:
    raw = {
        "uri": "file:///w/app/main.py",
        "position": {"line": 9, "character": 4},
        "openFiles": [
            {"uri": "file:///w/lib/util.py", "visible": True},
            {"uri": "file:///w/app/models.py"},
            {"uri": "file:///w/app/views.py", "visible": False},
        ],
        "recentEdits": [
            {"uri": "file:///w/app/models.py", "editedAt": "2026-12-01T09:29:00Z"},
            {"uri": "file:///w/lib/util.py", "editedAt": "2026-12-01T08:30:00+00:00"},
            {"uri": "file:///w/app/views.py", "editedAt": "2026-12-01T09:31:00.250Z"},
        ],
    }

    app, lib = focus_of(raw)

    assert app == Focus(
        active_path="main.py",
        cursor_line=10,
        visible_paths=(),
        open_paths=("models.py", "views.py"),
        recent_edits=(RecentEdit("models.py", 60.0), RecentEdit("views.py", 0.0)),
    )
    assert lib == Focus(visible_paths=("util.py",), recent_edits=(RecentEdit("util.py", 3600.0),))


# Each case: the focus sent, and the words the error message must hold.
INVALID: dict[str, tuple[Any, str]] = {
    "open files not a list": ({"openFiles": "file:///w/app/a.py"}, "focus.openFiles must be a list"),
    "open file as a bare URI": ({"openFiles": ["file:///w/app/a.py"]}, "focus.openFiles must be a list"),
    "open file outside": ({"openFiles": [{"uri": "file:///etc/passwd"}]}, "focus.openFiles[0].uri"),
    "visible not a boolean": (
        {"openFiles": [{"uri": "file:///w/app/a.py", "visible": "yes"}]},
        "focus.openFiles[0].visible must be true or false",
    ),
    "edit without a time": (
        {"recentEdits": [{"uri": "file:///w/app/a.py"}]},
        "focus.recentEdits[0].editedAt must be an ISO 8601 date-time",
    ),
    "edit on a bare date": (
        {"recentEdits": [{"uri": "file:///w/app/a.py", "editedAt": "2026-12-01"}]},
        "focus.recentEdits[0].editedAt",
    ),
    "edit time as a number": (
        {"recentEdits": [{"uri": "file:///w/app/a.py", "editedAt": 1764581400}]},
        "focus.recentEdits[0].editedAt",
    ),
    "a character that is not a number": (
        {"uri": "file:///w/app/a.py", "position": {"line": 3, "character": "4"}},
        "focus.position must be",
    ),
    "a negative character": (
        {"uri": "file:///w/app/a.py", "position": {"line": 3, "character": -1}},
        "focus.position must be",
    ),
    "too many open files": (
        {"openFiles": [{"uri": f"file:///w/app/{n}.py"} for n in range(MAX_FOCUS_FILES + 1)]},
        f"at most {MAX_FOCUS_FILES} files",
    ),
}


@pytest.mark.parametrize("case", INVALID)
def test_a_malformed_focus_is_refused_naming_the_field(case: str) -> None:
    raw, words = INVALID[case]
    with pytest.raises(InvalidRequestError) as error:
        focus_of(raw)
    assert words in str(error.value)


def test_unknown_fields_are_ignored_with_one_warning_naming_each() -> None:
    params = {
        "task": "x",
        "budget": 5,
        "focus": {
            "openUris": "x",
            "position": {"line": 0, "character": 0, "col": 1},
            "openFiles": [{"uri": "file:///w/app/a.py"}]
            + [{"uri": "file:///w/app/b.py", "k": n} for n in range(12)],
            "recentEdits": [{"uri": "file:///w/app/a.py", "editedAt": "2026-12-01T09:29:00Z", "by": "me"}],
        },
    }

    (warning,) = ignored_fields(params)

    assert warning.code == UNKNOWN_FIELD_WARNING
    shown = ["budget", "focus.openUris", "focus.position.col", "focus.openFiles[1].k", "focus.openFiles[7].k"]
    assert [field for field in shown if field not in warning.message] == []
    # 16 fields: the first ten are named, the other six counted.
    assert "focus.openFiles[8].k" not in warning.message
    assert warning.message.endswith("and 6 more")
    assert ignored_fields({"task": "x", "focus": {"uri": "file:///w/app/a.py"}}) == []


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_memory_keeps_the_last_edit_of_each_file_newest_first() -> None:
    clock = Clock()
    memory = EditMemory(clock)
    memory.record(["a.py"])
    clock.now += 30
    memory.record(["b.py"])
    clock.now += 10
    memory.record(["a.py"])
    clock.now += 5

    assert memory.recent() == (RecentEdit("a.py", 5.0), RecentEdit("b.py", 15.0))


def test_memory_is_bounded_and_leaves_checkouts_out() -> None:
    clock = Clock()
    memory = EditMemory(clock)
    memory.record_saves([f"checkout/{n}.py" for n in range(MAX_SAVE_BATCH_FILES + 1)])
    assert memory.recent() == ()

    for n in range(MAX_REMEMBERED_EDITS + 3):
        clock.now += 1
        memory.record_saves([f"{n}.py"])

    remembered = [edit.path for edit in memory.recent()]
    assert len(remembered) == MAX_REMEMBERED_EDITS
    assert remembered[0] == f"{MAX_REMEMBERED_EDITS + 2}.py"
    assert "0.py" not in remembered


def test_memory_adopts_another_processes_edits_and_each_file_keeps_its_latest() -> None:
    clock = Clock()
    changes: list[list[tuple[str, float]]] = []
    memory = EditMemory(clock, on_change=lambda: changes.append(memory.edited()))
    memory.record(["a.py"])
    clock.now += 100

    # The last writer's memory: b.py before a.py's edit here, a.py's older edit, c.py after it.
    memory.adopt([("b.py", 950.0), ("a.py", 900.0), ("c.py", 1050.0)])

    assert memory.edited() == [("b.py", 950.0), ("a.py", 1000.0), ("c.py", 1050.0)]
    assert changes[-1] == memory.edited() and len(changes) == 2
    # A follower's view: its own edits and the writer's, a file in both at its latest edit.
    theirs = [("d.py", 1090.0), ("a.py", 1080.0), ("old.py", clock.now - EDIT_MEMORY_S - 1)]
    assert memory.recent(theirs) == (
        RecentEdit("d.py", 10.0),
        RecentEdit("a.py", 20.0),
        RecentEdit("c.py", 50.0),
        RecentEdit("b.py", 150.0),
    )
    assert memory.recent()[0] == RecentEdit("c.py", 50.0)


def test_memory_joins_the_request_and_open_documents_stand_in_for_open_files() -> None:
    sent = Focus(active_path="a.py", recent_edits=(RecentEdit("a.py", 50.0), RecentEdit("c.py", 90.0)))
    remembered = (RecentEdit("b.py", 10.0), RecentEdit("a.py", 20.0))

    merged = with_editor_memory(sent, remembered, ["z.py", "a.py"])

    assert merged.recent_edits == (
        RecentEdit("b.py", 10.0),
        RecentEdit("a.py", 20.0),
        RecentEdit("c.py", 90.0),
    )
    assert merged.open_paths == ("a.py", "z.py")
    told = with_editor_memory(Focus(visible_paths=("v.py",)), (), ["z.py"])
    assert told.open_paths == () and told.visible_paths == ("v.py",)
