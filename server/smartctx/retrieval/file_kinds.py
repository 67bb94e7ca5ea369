"""What kind of file a path is: the project's own code, its tests, or code it only carries.

Vendored copies, generated files, documentation and build or release scripts match a task's words
as well as the code that needs changing (a vendored urllib3 matches a URL, a release script a PR
template), so they rank below the project's own code. The vendored, generated and documentation
patterns are GitHub Linguist's (``linguist_rules.json``, ported by scripts/data/port_linguist_rules.py;
MIT licence), plus a few forms Linguist does not list; ``.gitattributes`` ``linguist-vendored``,
``linguist-generated`` and ``linguist-documentation`` marks, which projects already set for GitHub,
override them either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources


class FileKind(str, Enum):
    """Why a file is not the project's own code, or not its code to change (a test library); the
    value names its score factor and reads in the file map's reason."""

    TEST = "test"
    TEST_LIBRARY = "test library"
    VENDORED = "vendored"
    GENERATED = "generated"
    DOCUMENTATION = "documentation"
    BUILD = "build"


# Paths Linguist does not list that are carried, generated or build code all the same.
_OWN_PATTERNS: Mapping[FileKind, tuple[str, ...]] = {
    FileKind.VENDORED: (
        # A dependency copied into a package (``requests/packages/urllib3``); a top-level
        # ``packages/`` is a monorepo's own code.
        r".+/packages/",
        r"(^|/)_?vendored?/",
        r"(^|/)_vendor/",
        r"(^|/)site-packages/",
        # A versioned bundle of a library (``jquery-3.5.1.js``, ``d3.v7.min.js``,
        # ``bootstrap-datepicker-1.9.0.js``).
        r"(^|/)[\w.-]+?[-.]v?\d+\.\d+(\.\d+)?([-.][\w.]+)?\.(js|css)$",
    ),
    FileKind.GENERATED: (
        r"_pb2(_grpc)?\.pyi?$",
        r"\.pb\.(go|cc|h)$",
        r"(^|/)\w+_generated\.\w+$",
        r"\.g\.(cs|dart)$",
    ),
    FileKind.BUILD: (
        r"^setup\.py$",
        r"(^|/)(noxfile|fabfile|tasks|dodo|pavement|conanfile)\.py$",
        r"(^|/)(release|releasing|build|dist|packaging|ci)/",
        r"(^|/)(release|make_release|bump_?version)\.(py|sh|js|ts|rb)$",
        r"(^|/)(Rakefile|Gemfile|Makefile|CMakeLists\.txt|build\.gradle|gulpfile\.js|Gruntfile\.js)$",
    ),
}

# Test code by folder and file name, as the test runners of each language find it.
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "__mocks__", "e2e"})
_TEST_NAME = re.compile(
    r"(^test_.+\.py$)|(^tests?\.py$)|(^conftest\.py$)"
    r"|(_tests?\.(py|go|rs|c|cc|cpp|rb|exs?)$)"
    r"|(_spec\.rb$)|(\.(test|spec)\.[cm]?[jt]sx?$)"
    r"|((Tests?|IT|TestCase)\.(java|kt|scala|cs)$)"
    r"|(^Test[A-Z]\w*\.(java|kt|scala|cs)$)"
)

# A ``.gitattributes`` attribute that marks a kind, set (``linguist-vendored``,
# ``linguist-vendored=true``) or unset (``-linguist-vendored``, ``=false``) for a pattern.
_ATTRIBUTES = {
    "linguist-vendored": FileKind.VENDORED,
    "linguist-generated": FileKind.GENERATED,
    "linguist-documentation": FileKind.DOCUMENTATION,
}
# The order in which kinds are checked: the first that matches names the file.
_KIND_ORDER = (FileKind.GENERATED, FileKind.VENDORED, FileKind.DOCUMENTATION, FileKind.BUILD)


# A Python package's own ``test`` or ``testing`` subpackage is a library the project ships for its
# users' tests (``django/test/``, ``sympy/testing/``, ``numpy/testing/``, ``matplotlib/testing/``),
# not its test suite: the singular folder, below a package folder, in a Python file not named as a
# test. A top-level ``test/`` or ``testing/`` (CPython's ``Lib/test/`` suite is named ``test_*.py``;
# pytest's ``testing/`` is top-level) and Maven's ``src/test/`` stay tests. Such a library is code a
# task can be about, so it is no test, but it ranks lower (``TEST_LIBRARY``): most tasks that say a
# word of testing are not about the library that tests with.
_LIBRARY_TEST_FOLDERS = frozenset({"test", "testing"})
_NOT_PACKAGE_FOLDERS = frozenset({"src", "lib", "source"})


def is_test_path(path: str) -> bool:
    """Whether a workspace-relative path is test code, by the folder and file names test runners use."""
    return test_kind(path) is FileKind.TEST


# A request asks of a few thousand paths, most of them asked before.
@lru_cache(maxsize=65_536)
def test_kind(path: str) -> FileKind | None:
    """``TEST`` for test code, ``TEST_LIBRARY`` for a package's own test library, else None."""
    *folders, name = path.split("/")
    if _TEST_NAME.search(name) is not None:
        return FileKind.TEST
    in_library = False
    for index, folder in enumerate(folders):
        if folder.lower() not in _TEST_FOLDERS:
            continue
        # A test folder inside another (``django/test/tests/``) is the suite's, not the library's.
        if in_library or not _is_library_test_folder(folders, index, name):
            return FileKind.TEST
        in_library = True
    return FileKind.TEST_LIBRARY if in_library else None


def _is_library_test_folder(folders: Sequence[str], index: int, name: str) -> bool:
    return (
        name.endswith(".py")
        and folders[index] in _LIBRARY_TEST_FOLDERS
        and index > 0
        and folders[index - 1].lower() not in _NOT_PACKAGE_FOLDERS
    )


@dataclass(frozen=True)
class AttributeRule:
    """One ``.gitattributes`` line's say on a kind: files matching ``pattern`` (relative to the
    folder of the ``.gitattributes`` file, ``base``) are of ``kind`` or, when ``marked`` is false,
    are not."""

    base: str
    pattern: str
    kind: FileKind
    marked: bool

    def matches(self, path: str) -> bool:
        if self.base and not path.startswith(self.base + "/"):
            return False
        relative = path[len(self.base) + 1 :] if self.base else path
        pattern = self.pattern.lstrip("/")
        if pattern.endswith("/**"):
            return relative.startswith(pattern[:-3] + "/") or fnmatchcase(relative, pattern[:-3] + "/*")
        if "/" in self.pattern.rstrip("/"):
            return fnmatchcase(relative, pattern)
        # A pattern without a slash matches a file name at any depth, as in .gitignore.
        return any(fnmatchcase(part, pattern) for part in relative.split("/"))


def parse_gitattributes(text: str, base: str = "") -> tuple[AttributeRule, ...]:
    """The linguist marks in one ``.gitattributes`` file (``base`` is its folder, "" at the root)."""
    rules: list[AttributeRule] = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        pattern, attributes = fields[0], fields[1:]
        for attribute in attributes:
            marked = not attribute.startswith(("-", "!"))
            name, _, value = attribute.lstrip("-!").partition("=")
            if name in _ATTRIBUTES:
                rules.append(
                    AttributeRule(base, pattern, _ATTRIBUTES[name], marked and value.lower() != "false")
                )
    return tuple(rules)


# How a pattern anchored at the start of a path segment begins, in Linguist's spellings.
_SEGMENT_START = ("(^|/)", "(?:^|/)", "(^|\\/)", "(?:^|\\/)")


@dataclass(frozen=True)
class _KindPatterns:
    """One kind's patterns, split by anchoring so that each is only tried where it can match: a
    single expression of two hundred alternatives tried at every character took a millisecond a
    path; tried at segment starts only it takes a few microseconds."""

    # Patterns that start at the beginning of a path segment (Linguist's ``(^|/)…``), prefix removed.
    segment: re.Pattern[str] | None
    # Patterns anchored at the start of the path (``^…``).
    root: re.Pattern[str] | None
    # Everything else, searched anywhere.
    anywhere: re.Pattern[str] | None

    def matches(self, path: str) -> bool:
        if self.root is not None and self.root.match(path):
            return True
        if self.segment is not None:
            start = 0
            while start >= 0:
                if self.segment.match(path, start):
                    return True
                start = path.find("/", start) + 1 or -1
        return self.anywhere is not None and self.anywhere.search(path) is not None


def _joined(patterns: Sequence[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns)) if patterns else None


def _split(patterns: Sequence[str]) -> _KindPatterns:
    segment: list[str] = []
    root: list[str] = []
    anywhere: list[str] = []
    for pattern in patterns:
        prefix = next((start for start in _SEGMENT_START if pattern.startswith(start)), None)
        if prefix is not None:
            segment.append(pattern[len(prefix) :])
        elif pattern.startswith("^"):
            root.append(pattern[1:])
        else:
            anywhere.append(pattern)
    return _KindPatterns(_joined(segment), _joined(root), _joined(anywhere))


@lru_cache(maxsize=1)
def _compiled() -> Mapping[FileKind, _KindPatterns]:
    text = resources.files("smartctx.retrieval").joinpath("linguist_rules.json").read_text("utf-8")
    data = json.loads(text)
    ported = {
        FileKind.VENDORED: data["vendored"],
        FileKind.GENERATED: data["generated"],
        FileKind.DOCUMENTATION: data["documentation"],
        FileKind.BUILD: [],
    }
    return {kind: _split([*ported[kind], *_OWN_PATTERNS.get(kind, ())]) for kind in _KIND_ORDER}


# Paths repeat from request to request; matching a new one costs about 0.1 ms.
@lru_cache(maxsize=65_536)
def _pattern_kind(path: str) -> FileKind | None:
    patterns = _compiled()
    return next((kind for kind in _KIND_ORDER if patterns[kind].matches(path)), None)


def file_kind(path: str, attributes: Sequence[AttributeRule] = ()) -> FileKind | None:
    """The kind of a path that is not the project's own code, or None for own code.

    Test code is test code first (projects mark their test fixtures vendored so GitHub's language
    bar ignores them; they are still tests). Otherwise the last ``.gitattributes`` rule that speaks
    of a kind decides for that kind (as git's own attribute lookup does); a kind it does not speak
    of is decided by the patterns.
    """
    if (tested := test_kind(path)) is not None:
        return tested
    decided: dict[FileKind, bool] = {}
    for rule in attributes:
        if rule.matches(path):
            decided[rule.kind] = rule.marked
    for kind in _KIND_ORDER:
        if decided.get(kind):
            return kind
    by_pattern = _pattern_kind(path)
    return None if by_pattern is None or decided.get(by_pattern) is False else by_pattern


def file_kinds(paths: Iterable[str], attributes: Sequence[AttributeRule] = ()) -> dict[str, FileKind]:
    """The kind of each path that is not own code."""
    kinds: dict[str, FileKind] = {}
    for path in paths:
        kind = file_kind(path, attributes)
        if kind is not None:
            kinds[path] = kind
    return kinds


# Folder depth down to which ``.gitattributes`` files are read: the root and the top-level folders,
# where projects keep them. Each read costs a path check and a system call on every request; every
# ancestor folder of forty files was about sixty of them, a tenth of the score stage.
MAX_ATTRIBUTES_DEPTH = 1


def read_attributes(read: Callable[[str], bytes | None], paths: Iterable[str]) -> tuple[AttributeRule, ...]:
    """The linguist marks of the ``.gitattributes`` files at the root and in the top-level folders
    of ``paths`` (``read`` gives a workspace file's bytes, or None)."""
    folders = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        folders.update(
            "/".join(parts[:depth]) for depth in range(1, min(len(parts), MAX_ATTRIBUTES_DEPTH) + 1)
        )
    rules: list[AttributeRule] = []
    # Shallower files first: a deeper .gitattributes overrides its parent's, as in git.
    for folder in sorted(folders, key=lambda folder: (folder.count("/") + bool(folder), folder)):
        data = read(f"{folder}/.gitattributes" if folder else ".gitattributes")
        if data:
            rules.extend(parse_gitattributes(data.decode("utf-8", "replace"), folder))
    return tuple(rules)
