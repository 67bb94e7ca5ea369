"""Git-exact ignore rules for one workspace root.

The scanner and the file watcher ask the same question: would git ignore this path, or is it a folder no user
wants indexed? This module answers it the way git does, which a flat pattern matcher cannot:

* Pattern sources, from lowest to highest precedence: ``core.excludesFile`` (``git config``, falling back to
  ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``), ``$GIT_COMMON_DIR/info/exclude``, the
  ``.gitignore`` files of the repository above the workspace root when the root is a subfolder of a
  repository, then per directory from the root downwards: ``.gitignore``, then ``.smartctxignore`` (same
  syntax, layered after ``.gitignore`` of the same directory), and at the root ``ScanConfig.extra_ignores``
  after the root's two files. The last matching pattern in the highest-precedence source decides.
* Each pattern is matched against the path relative to the directory of the file it came from; a pattern
  without a slash (after dropping a trailing one) matches the basename at any depth.
* A directory that is excluded is never entered, so nothing below it can be re-included by a negation. That
  is why every pattern is matched against the exact path only and exclusion of parents comes from the walk.
* Single patterns are compiled to regular expressions by ``pathspec``; line handling that pathspec does not
  model the way git does (trailing spaces, CRLF, a UTF-8 byte order mark, POSIX character classes, a literal
  ``#`` or ``!`` after a negation) is done here first.

Deliberate differences from git:

* Tracked files that match an ignore pattern are skipped (git keeps indexing them); the index of the git
  repository is not read.
* Nested repositories are entered like ordinary folders (git lists them as one opaque entry); the outer
  rules keep applying inside them and their own ``.gitignore`` files are layered as usual.
* The workspace root itself is never ignored, even when the surrounding repository ignores it: the user
  opened it on purpose.
* Matching is case-sensitive (``core.ignoreCase`` is not consulted).
* ``.gitignore`` and ``.smartctxignore`` files that are symbolic links are not read, as git does since 2.32.

Built-in skips apply whatever the ignore files say and count as ignored: version-control metadata, package
manager and tool caches, virtual environments (``.venv`` or any folder holding ``pyvenv.cfg`` or
``conda-meta``), and build output folders whose build file sits beside them (``target`` next to
``Cargo.toml``, ``vendor`` next to ``go.mod`` …). ``build`` and ``dist`` are not built in: real repositories
keep source in them (VS Code's ``build/`` is TypeScript), and projects that generate them list them in
``.gitignore`` already.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from operator import methodcaller
from pathlib import Path

from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from smartctx.core.shards import Shard
from smartctx.indexing.git import git_output

GITIGNORE_NAME = ".gitignore"
SMARTCTXIGNORE_NAME = ".smartctxignore"
DEFAULT_MAX_FILE_BYTES = 1_000_000

# Folders skipped by name alone, wherever they appear.
BUILTIN_SKIPPED_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "_darcs",
        ".jj",
        "node_modules",
        "bower_components",
        "jspm_packages",
        ".pnpm-store",
        ".yarn",
        "__pycache__",
        ".venv",
        ".tox",
        ".nox",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".pytype",
        ".ipynb_checkpoints",
        ".gradle",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".turbo",
        ".angular",
        ".terraform",
        ".dart_tool",
        ".pub-cache",
        ".stack-work",
        "elm-stuff",
        ".zig-cache",
        "zig-cache",
        ".direnv",
        ".cache",
    }
)

# Folders skipped only when one of the given build files sits beside them; a leading "*" matches a suffix.
# The folder names alone are too common for real source ("target", "vendor", "bin").
BUILTIN_SKIPPED_BESIDE: dict[str, tuple[str, ...]] = {
    "target": ("Cargo.toml", "pom.xml", "build.sbt"),
    "vendor": ("go.mod", "composer.json"),
    "Pods": ("Podfile",),
    "_build": ("mix.exs", "rebar.config"),
    "deps": ("mix.exs",),
    ".build": ("Package.swift",),
    "zig-out": ("build.zig",),
    "bin": ("*.csproj", "*.fsproj", "*.vbproj"),
    "obj": ("*.csproj", "*.fsproj", "*.vbproj"),
}

# A folder holding one of these entries is a Python environment (virtualenv/venv or conda).
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")

# git's wildmatch supports these bracket classes; Python's re does not, so they are expanded to ranges.
# The ranges avoid "]" and "\" so the text survives pathspec's bracket handling unchanged.
POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \t",
    "cntrl": "\x00-\x1f\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": " \t\n\v\f\r",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}

UTF8_BOM = "\ufeff"
GLOB_CHARS = frozenset("*?[\\")


@dataclass(frozen=True)
class ScanConfig:
    """What the scanner indexes; every field has the default a user expects."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Extra gitignore-syntax patterns, layered as if they ended the root's .smartctxignore.
    extra_ignores: tuple[str, ...] = ()
    # With False, only .smartctxignore, extra_ignores and the built-in skips apply.
    respect_gitignore: bool = True
    # One of N processes publishing a commit together indexes only the files of its shard.
    shard: Shard | None = None


@dataclass(frozen=True)
class IgnorePattern:
    """One compiled ignore line: `test` matches the exact path, never a descendant of it."""

    # Returns something truthy (a match or True) when the pattern matches.
    test: Callable[[str], object]
    negated: bool
    dir_only: bool
    basename_only: bool


@dataclass(frozen=True)
class IgnoreSource:
    """The patterns of one source, matched against paths below `base` (root-relative, ending in "/").

    `prefix` is prepended to the path below `base`; it is non-empty only for sources that live above the
    workspace root, whose patterns are relative to a folder the root sits in.
    """

    base: str
    prefix: str
    patterns: tuple[IgnorePattern, ...]


Layers = tuple[IgnoreSource, ...]


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces that are not escaped with a backslash, as git does (tabs are kept)."""
    end = len(line)
    trim_at: int | None = None
    index = 0
    while index < end:
        char = line[index]
        if char == " ":
            if trim_at is None:
                trim_at = index
        else:
            trim_at = None
            if char == "\\":
                index += 1
        index += 1
    return line if trim_at is None else line[:trim_at]


def _expand_posix_classes(body: str) -> str | None:
    """Replace `[:name:]` inside bracket expressions with explicit ranges.

    Returns None for an unknown class name: git then treats the whole pattern as matching nothing.
    """
    if "[:" not in body:
        return body
    out: list[str] = []
    index = 0
    end = len(body)
    while index < end:
        char = body[index]
        if char == "\\" and index + 1 < end:
            out.append(body[index : index + 2])
            index += 2
            continue
        if char != "[":
            out.append(char)
            index += 1
            continue
        # Copy one bracket expression, expanding classes; a first "]" (after negation) is a literal.
        out.append("[")
        index += 1
        if index < end and body[index] in "!^":
            out.append(body[index])
            index += 1
        if index < end and body[index] == "]":
            out.append("]")
            index += 1
        while index < end and body[index] != "]":
            if body.startswith("[:", index):
                close = body.find(":]", index + 2)
                if close < 0:
                    return None
                expansion = POSIX_CLASSES.get(body[index + 2 : close])
                if expansion is None:
                    return None
                out.append(expansion)
                index = close + 2
            else:
                out.append(body[index])
                index += 1
        if index < end:
            out.append("]")
            index += 1
    return "".join(out)


def _protect_trailing_whitespace(body: str) -> str:
    """Keep a trailing tab or escaped space that pathspec would strip, by wrapping it in a bracket."""
    if not body or not body[-1].isspace():
        return body
    backslashes = len(body) - 1 - len(body[:-1].rstrip("\\"))
    escaped = backslashes % 2 == 1
    stem = body[:-2] if escaped else body[:-1]
    return f"{stem}[{body[-1]}]"


def compile_pattern(line: str) -> IgnorePattern | None:
    """Compile one line of an ignore file; None for blank lines, comments and patterns git never matches."""
    if not line or line.startswith("#"):
        return None
    line = _trim_trailing_spaces(line)
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    basename_only = "/" not in line
    body = _expand_posix_classes(line)
    if body is None:
        return None
    # pathspec reads a leading "!" or "#" as syntax, but after git has taken the negation they are literals.
    if body[0] in "!#":
        body = "\\" + body
    body = _protect_trailing_whitespace(body)
    test = _literal_test(body.removeprefix("/"), basename_only) or _regex_test(body, basename_only)
    if test is None:
        return None
    return IgnorePattern(test=test, negated=negated, dir_only=dir_only, basename_only=basename_only)


def _regex_test(body: str, basename_only: bool) -> Callable[[str], object] | None:
    """Match with pathspec's regular expression for the pattern; None if git never matches it."""
    # Anchoring a basename pattern lets it be matched against the basename alone, which is both git's rule
    # and cheaper than matching "**/name" against the whole path.
    source = "/" + body if basename_only else body
    try:
        regex, _include = GitIgnoreSpecPattern.pattern_to_regex(source)
    except GitIgnorePatternError:
        return None
    if regex is None:
        return None
    compiled = re.compile(regex, re.DOTALL)
    # pathspec's regexes also match descendants of a matching path; choosing how to apply them restores
    # exact-path matching: unanchored special cases ("*", "**") are meant for search, a trailing "/**"
    # legitimately matches anything below, and everything else must match the whole path.
    if not regex.startswith("^"):
        return compiled.search
    if not basename_only and body.rsplit("/", 1)[-1] == "**":
        return compiled.match
    return compiled.fullmatch


def _literal_test(body: str, basename_only: bool) -> Callable[[str], object] | None:
    """A plain string comparison for the commonest patterns ("name", "dir/name", "*.ext"), which a scan
    tests against every entry; None when the pattern needs the regular expression.

    The suffix form is only valid against a basename: in "/*.py" the star must not match a "/".
    """
    if not GLOB_CHARS.intersection(body):
        return body.__eq__
    suffix = body[1:]
    if basename_only and body.startswith("*") and not GLOB_CHARS.intersection(suffix):
        return methodcaller("endswith", suffix)
    return None


def compile_lines(lines: Sequence[str], base: str = "", prefix: str = "") -> IgnoreSource:
    """Compile the lines of one ignore source whose patterns are relative to `base`."""
    patterns: list[IgnorePattern] = []
    for raw in lines:
        line = raw[:-1] if raw.endswith("\r") else raw
        pattern = compile_pattern(line)
        if pattern is not None:
            patterns.append(pattern)
    return IgnoreSource(base=base, prefix=prefix, patterns=tuple(patterns))


def _split_ignore_text(text: str) -> list[str]:
    """Split an ignore file into lines the way git does: on LF only, ignoring a leading byte order mark."""
    return text.removeprefix(UTF8_BOM).split("\n")


# One pattern with the position of its source flattened in: (test, negated, basename_only, base_len, prefix).
_Rule = tuple[Callable[[str], object], bool, bool, int, str]


class Matcher:
    """The patterns that apply inside one folder, flattened in the order they are tried.

    A walk builds one per folder that adds ignore files and shares it with every folder below, so testing an
    entry is a single loop over the rules: highest precedence first, and the first match decides.
    """

    __slots__ = ("_dir_rules", "_file_rules", "layers")

    def __init__(self, layers: Layers) -> None:
        self.layers = layers
        dir_rules: list[_Rule] = []
        file_rules: list[_Rule] = []
        for source in reversed(layers):
            for pattern in reversed(source.patterns):
                rule = (pattern.test, pattern.negated, pattern.basename_only, len(source.base), source.prefix)
                dir_rules.append(rule)
                if not pattern.dir_only:
                    file_rules.append(rule)
        self._dir_rules = tuple(dir_rules)
        self._file_rules = tuple(file_rules)

    def extend(self, more: Layers) -> Matcher:
        """The matcher for a subfolder that adds `more` sources (itself when it adds none)."""
        return Matcher(self.layers + more) if more else self

    def decide(self, rel_path: str, name: str, is_dir: bool) -> bool | None:
        """True if excluded, False if re-included by a negation, None if no pattern matches the path."""
        for test, negated, basename_only, base_len, prefix in self._dir_rules if is_dir else self._file_rules:
            if test(name if basename_only else prefix + rel_path[base_len:]):
                return not negated
        return None


def is_environment_dir(names: Collection[str]) -> bool:
    """A folder whose listing holds a virtualenv or conda marker is a Python environment."""
    return any(marker in names for marker in ENVIRONMENT_MARKERS)


def is_builtin_skip(name: str, is_dir: bool, sibling_names: Callable[[], Collection[str]]) -> bool:
    """True for entries skipped whatever the ignore files say; `sibling_names` lists the parent lazily.

    Names apply to files too, because a submodule's ".git" is a file.
    """
    if name in BUILTIN_SKIPPED_NAMES:
        return True
    markers = BUILTIN_SKIPPED_BESIDE.get(name) if is_dir else None
    if markers is None:
        return False
    siblings = sibling_names()
    for marker in markers:
        if marker.startswith("*"):
            if any(sibling.endswith(marker[1:]) for sibling in siblings):
                return True
        elif marker in siblings:
            return True
    return False


def _read_text(path: Path, follow_symlinks: bool) -> str | None:
    """Read a small text file; None when absent, unreadable, or a symbolic link that must not be followed."""
    flags = os.O_RDONLY if follow_symlinks else os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def _find_repository(root: Path) -> tuple[Path, Path] | None:
    """The work tree top level and the common git directory of the repository holding `root`, if any."""
    for top in (root, *root.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
        elif dot_git.is_file():
            text = _read_text(dot_git, follow_symlinks=True) or ""
            line = text.strip()
            if not line.startswith("gitdir:"):
                continue
            git_dir = (top / line.removeprefix("gitdir:").strip()).resolve()
        else:
            continue
        # Linked worktrees keep info/exclude in the main repository, named by the "commondir" file.
        common = _read_text(git_dir / "commondir", follow_symlinks=True)
        if common is not None and common.strip():
            git_dir = (git_dir / common.strip()).resolve()
        return top, git_dir
    return None


def _configured_excludes_file(root: Path) -> Path:
    """`core.excludesFile` as git resolves it for `root`, or git's default location."""
    configured = git_output(root, "config", "--path", "--get", "core.excludesFile")
    if configured is not None:
        return root / Path(configured).expanduser()
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "git" / "ignore"


@dataclass
class _CachedFile:
    mtime_ns: int
    size: int
    patterns: IgnoreSource


class IgnoreRules:
    """The compiled ignore state of one workspace root, reusable for single paths as the watcher asks.

    Per-directory ignore files are compiled on first use and recompiled when their size or mtime changes,
    so a long-lived instance follows edits to `.gitignore`.
    """

    def __init__(self, root: Path, config: ScanConfig, root_layers: Layers) -> None:
        self.root = root
        self.config = config
        # The sources that apply above the root's own ignore files, which `dir_layers("")` adds.
        self.root_matcher = Matcher(root_layers)
        self.file_names = (
            (GITIGNORE_NAME, SMARTCTXIGNORE_NAME) if config.respect_gitignore else (SMARTCTXIGNORE_NAME,)
        )
        self._extra = compile_lines(config.extra_ignores)
        self._cache: dict[str, _CachedFile] = {}

    @classmethod
    def load(cls, root: Path, config: ScanConfig) -> IgnoreRules:
        """Collect the sources that apply above the root's own directory (global, repository, parents)."""
        root = Path(os.path.realpath(root))
        repository = _find_repository(root)
        top = repository[0] if repository else root
        root_prefix = "" if top == root else root.relative_to(top).as_posix() + "/"
        layers: list[IgnoreSource] = []
        if config.respect_gitignore:
            # Files outside the work tree are often symbolic links into a dotfiles folder; git follows them.
            excludes = _read_text(_configured_excludes_file(root), follow_symlinks=True)
            if excludes is not None:
                layers.append(compile_lines(_split_ignore_text(excludes), prefix=root_prefix))
            if repository is not None:
                info_exclude = _read_text(repository[1] / "info" / "exclude", follow_symlinks=True)
                if info_exclude is not None:
                    layers.append(compile_lines(_split_ignore_text(info_exclude), prefix=root_prefix))
        rules = cls(root, config, ())
        layers.extend(_parent_layers(top, root, rules.file_names))
        rules.root_matcher = Matcher(tuple(layers))
        return rules

    def dir_layers(self, rel_dir: str, names: Collection[str] | None = None) -> Layers:
        """The sources a directory adds for its children; `names` (its listing) saves stat calls."""
        found: list[IgnoreSource] = []
        for file_name in self.file_names:
            if names is not None and file_name not in names:
                continue
            patterns = self._load_file(rel_dir, file_name)
            if patterns is not None and patterns.patterns:
                found.append(patterns)
        if not rel_dir and self._extra.patterns:
            found.append(self._extra)
        return tuple(found)

    def _load_file(self, rel_dir: str, file_name: str) -> IgnoreSource | None:
        path = self.root / rel_dir / file_name
        try:
            info = path.lstat()
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        cached = self._cache.get(str(path))
        if cached is not None and cached.mtime_ns == info.st_mtime_ns and cached.size == info.st_size:
            return cached.patterns
        text = _read_text(path, follow_symlinks=False)
        if text is None:
            return None
        patterns = compile_lines(_split_ignore_text(text), base=rel_dir)
        self._cache[str(path)] = _CachedFile(info.st_mtime_ns, info.st_size, patterns)
        return patterns

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Whether the scanner skips `rel_path` as ignored, including because a parent folder is skipped.

        A path that climbs out of the root or runs through a symlinked folder counts as ignored too, since
        the scanner never reaches it.
        """
        parts = [part for part in rel_path.strip("/").split("/") if part not in ("", ".")]
        return bool(parts) and self._matcher_at(parts, is_dir) is None

    def matcher_entering(self, rel_dir: str) -> Matcher | None:
        """The matcher a walk holds when it enters folder `rel_dir` (before adding the folder's own ignore
        files), or None when the walk never enters it; lets a walk start below the root."""
        parts = [part for part in rel_dir.strip("/").split("/") if part not in ("", ".")]
        if not parts:
            return self.root_matcher
        matcher = self._matcher_at(parts, is_dir=True)
        if matcher is None or (self.root / rel_dir).is_symlink():
            return None
        return matcher

    def _matcher_at(self, parts: Sequence[str], is_dir: bool) -> Matcher | None:
        """The matcher that decided the last of `parts` (not excluded), or None when the path is ignored."""
        if ".." in parts:
            return None
        matcher = self.root_matcher.extend(self.dir_layers(""))
        rel_dir = ""
        for index, name in enumerate(parts):
            last = index == len(parts) - 1
            entry_is_dir = is_dir if last else True
            if is_builtin_skip(name, entry_is_dir, partial(_list_dir, self.root / rel_dir)):
                return None
            rel = rel_dir + name
            if matcher.decide(rel, name, entry_is_dir):
                return None
            if entry_is_dir and is_environment_dir(_present(self.root / rel, ENVIRONMENT_MARKERS)):
                return None
            if not last:
                if (self.root / rel).is_symlink():
                    return None
                rel_dir = rel + "/"
                matcher = matcher.extend(self.dir_layers(rel_dir))
        return matcher


def _parent_layers(top: Path, root: Path, file_names: Sequence[str]) -> list[IgnoreSource]:
    """Ignore files of the folders between the repository top level and the workspace root."""
    layers: list[IgnoreSource] = []
    below = root.relative_to(top).parts
    folder = top
    for depth in range(len(below)):
        prefix = "/".join(below[depth:]) + "/"
        for file_name in file_names:
            text = _read_text(folder / file_name, follow_symlinks=False)
            if text is not None:
                layers.append(compile_lines(_split_ignore_text(text), prefix=prefix))
        folder = folder / below[depth]
    return layers


def _list_dir(folder: Path) -> Collection[str]:
    try:
        return frozenset(child.name for child in folder.iterdir())
    except OSError:
        return frozenset()


def _present(folder: Path, names: Sequence[str]) -> Collection[str]:
    """Which of `names` exist in `folder`, symbolic links included."""
    return [name for name in names if os.path.lexists(folder / name)]
