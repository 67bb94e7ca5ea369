"""How much of a name or a path the task's own words cover.

BM25 weighs a word by its rarity across the whole index; these signals instead ask of one candidate
how much of *its name* the task says: ``Serializer`` is wholly named by a task about "serializing",
``deconstruct`` not at all. A bug report names its subject ("the migration serializer writes …")
far more often than it names a function, and the file or class called after that subject is where
the fix usually is. Words are compared by their Snowball stems, so "serializing" meets
``serializer``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

from smartctx.core.identifiers import split_identifier
from smartctx.retrieval.query import ParsedTask
from smartctx.retrieval.terms import stem

# Words this short say nothing as part of a name (``db``, ``io``, ``v``, ``1``).
MIN_NAME_WORD_CHARS = 3
# A file called ``__init__``, ``mod``, ``index`` or ``main`` is named after its folder.
_FOLDER_NAMED_FILES = frozenset({"__init__", "mod", "index", "main", "lib"})
# Folders that name no subject (``src/``, ``lib/``, ``internal/``): passed over for the one above.
_PLAIN_FOLDERS = frozenset({"src", "lib", "internal", "pkg", "main", "java", "app", "core"})
# A path part's words: ``io_uring``, ``preact-query``.
_PATH_WORD = re.compile(r"[-_.]")


class TaskNames:
    """How much of names and paths one task's words cover; a request's ranking asks it of every
    candidate and every file, so each path is covered once (score.py and files.py share it)."""

    def __init__(self, task: ParsedTask) -> None:
        self._stems = frozenset(stem(word) for word in task.words)
        self._paths: dict[str, tuple[float, float]] = {}
        self._scopes = frozenset(_scope_forms(scope) for scope in task.scopes)

    def name(self, name: str) -> float:
        """The share of ``name``'s words the task uses."""
        return self._covered(name)

    def path(self, path: str) -> tuple[float, float]:
        """The shares of the file's name and of its folder's name the task uses."""
        covered = self._paths.get(path)
        if covered is None:
            covered = (self._covered(file_name(path)), self._covered(folder_name(path)))
            self._paths[path] = covered
        return covered

    def scoped(self, path: str) -> float:
        """1 when the title's scope names a folder of the path or the file itself (``lsp:`` for
        ``helix-lsp/src/client.rs``, ``tool_msgs:`` for ``src/tool_msgs.c``), else 0."""
        return float(bool(self._scopes) and not self._scopes.isdisjoint(_path_forms(path)))

    def _covered(self, name: str) -> float:
        """The share of a name's words (of at least ``MIN_NAME_WORD_CHARS``) the task uses; 0 for a
        name without such words."""
        words = _name_stems(name)
        return len(self._stems.intersection(words)) / len(words) if words else 0.0


def file_name(path: str) -> str:
    """What a file is named after: its stem, or its folder's name for ``__init__.py`` and the like."""
    stem_name, folders = _stem_and_folders(path)
    if stem_name in _FOLDER_NAMED_FILES and folders:
        return folders[-1]
    return stem_name


def folder_name(path: str) -> str:
    """The folder above what the file is named after, by name (empty when there is none)."""
    stem_name, folders = _stem_and_folders(path)
    if stem_name in _FOLDER_NAMED_FILES:
        folders = folders[:-1]
    return folders[-1] if folders else ""


@lru_cache(maxsize=65_536)
def _stem_and_folders(path: str) -> tuple[str, tuple[str, ...]]:
    """A file's name without extensions, and the folders above it that name a subject (cached: a
    request asks for each of a few hundred paths again and again)."""
    pure = PurePosixPath(path)
    return pure.name.split(".", 1)[0], tuple(part for part in pure.parts[:-1] if part not in _PLAIN_FOLDERS)


@lru_cache(maxsize=65_536)
def _name_stems(name: str) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(stem(word) for word in split_identifier(name) if len(word) >= MIN_NAME_WORD_CHARS)
    )


def _scope_forms(scope: str) -> str:
    """A scope as a path part is compared: its stem without an extension (``config-win32.h``)."""
    return stem(scope.split(".", 1)[0])


@lru_cache(maxsize=65_536)
def _path_forms(path: str) -> frozenset[str]:
    """What a scope may name in a path: each folder and the file's stem, whole and by its words
    (``transport-classes-io_uring`` and ``uring``), stemmed."""
    parts = PurePosixPath(path.lower()).parts
    names = [*parts[:-1], parts[-1].split(".", 1)[0]] if parts else []
    return frozenset(stem(form) for name in names for form in (name, *_PATH_WORD.split(name)) if form)
