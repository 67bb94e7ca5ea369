"""The workspace scanner: one walk that decides which files the indexer reads.

`scan` walks the root once with `os.scandir`, never entering a folder that is ignored, and checks only what a
directory listing and a stat tell: ignore rules (git-exact, see `smartctx.indexing.ignore`), secret file
names, supported languages and the size cap. Content checks (binary, minified) need the bytes, so the indexer
calls `classify_content` after reading a file.

Symbolic links:

* A symlinked folder is never entered, so link loops cannot recurse. One that leaves the workspace counts as
  `SYMLINK_OUTSIDE`; one that stays inside is skipped without counting, since its target is walked under
  its own path.
* A symlinked file is indexed under the link's path only when its resolved target stays inside the root, is
  a regular file, is not ignored and is not a secret: a link never brings in content the rules exclude.
  A link that leaves the root counts as `SYMLINK_OUTSIDE`; a dangling or looping one as `UNREADABLE`.
* A link is matched against ignore patterns as a file, as git does (`dir/` patterns do not match it).

Secret files are recognised by name (`is_secret_path`): every `.env` variant including `.env.example` and
direnv's `.envrc`, `*.env`, private keys and keystores, credential and token files of common tools, Terraform
state and variables, and anything inside `.ssh` or `.gnupg`. Being over-cautious costs a little context;
being under-cautious leaks a credential into a prompt.

Content (`classify_content`): a NUL byte or more than 30 % control bytes in the first 8 KiB is binary; a
`.min.js`/`.min.css`-style name, any line over 5,000 characters, or lines averaging over 300 characters (in
files of 4 KiB or more) is minified or generated output.

Names that are not UTF-8 (a Latin-1 ``café.py`` from an old archive): ``os.scandir`` gives their other
bytes as lone surrogates (Python's ``surrogateescape``), which no text the index, the lexical index or
the protocols hold can carry, and which an editor cannot open by the name it would be cited as; so
such a file, or folder with everything in it, is skipped as ``UNDECODABLE_NAME`` and listed in
``ScanResult.undecodable`` under its printable form (``caf\\xe9.py``, see `printable_path`), which the
index report and the index status show so the user can rename it.

Skip counts: a pruned folder counts once (its contents are never listed), every other skipped entry once.
`check_path` gives one path the verdict a full scan would, for watcher events. `ScanConfig` and
`IgnoreRules` live in `smartctx.indexing.ignore` and are re-exported here.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType

from smartctx.indexing.ignore import (
    IgnoreRules,
    Matcher,
    ScanConfig,
    is_builtin_skip,
    is_environment_dir,
)

__all__ = [
    "IgnoreRules",
    "ScanConfig",
    "ScanResult",
    "ScannedFile",
    "SkipReason",
    "check_path",
    "classify_content",
    "is_decodable",
    "is_secret_path",
    "printable_path",
    "scan",
    "undecodable_entry",
]

MAX_EXAMPLES_PER_REASON = 5

# Binary detection looks at the start of the file, like git and grep do.
BINARY_SNIFF_BYTES = 8192
MAX_NON_TEXT_RATIO = 0.3
# Printable ASCII, the usual whitespace and control characters of text files, and every byte >= 0x80
# (UTF-8 and legacy 8-bit encodings) count as text.
TEXT_BYTES = bytes(sorted({0x07, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B} | set(range(0x20, 0x100)) - {0x7F}))

MINIFIED_NAME_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js", "-min.css")
# One line this long is generated output, not something a person wrote.
MAX_LINE_CHARS = 5000
# A file whose lines average this long is minified or bundled even without a single giant line.
MAX_AVERAGE_LINE_CHARS = 300
MIN_BYTES_FOR_AVERAGE = 4096
# Anchored at a newline so the search costs one pass; unanchored, it rescans every line from each of its
# characters (13 MB/s on django instead of 500).
LONG_LINE_AFTER_NEWLINE = re.compile(rb"\n[^\n]{%d}" % (MAX_LINE_CHARS + 1))

SECRET_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".pgpass",
        ".htpasswd",
        ".dockercfg",
        ".s3cfg",
        ".vault-token",
        "credentials",
        "secrets.json",
        "secrets.yml",
        "secrets.yaml",
        "secrets.toml",
    }
)
SECRET_NAME_PREFIXES = (".env.", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
SECRET_NAME_SUFFIXES = (
    ".env",
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".ppk",
    ".keystore",
    ".jks",
    ".kdbx",
    ".keytab",
    ".tfstate",
    ".tfstate.backup",
    ".tfvars",
)
# Name stems that are secrets only as data files: `credentials.py` is ordinary code (google-auth has one).
SECRET_DATA_STEMS = ("credentials", "client_secret", "service-account", "service_account")
SECRET_DATA_SUFFIXES = (".json", ".yml", ".yaml", ".toml", ".ini", ".xml")
SECRET_DIR_NAMES = frozenset({".ssh", ".gnupg"})


class SkipReason(str, Enum):
    """Why a file is not indexed."""

    IGNORED = "ignored"
    TOO_LARGE = "too-large"
    BINARY = "binary"
    MINIFIED = "minified"
    SECRET = "secret"
    UNSUPPORTED = "unsupported"
    SYMLINK_OUTSIDE = "symlink-outside"
    UNREADABLE = "unreadable"
    UNDECODABLE_NAME = "undecodable-name"


@dataclass(frozen=True)
class ScannedFile:
    """A file to index: workspace-relative POSIX path plus what `stat` said when it was scanned."""

    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class ScanResult:
    """The files to index, sorted by path, and how many entries each reason skipped."""

    files: tuple[ScannedFile, ...]
    skipped: Mapping[SkipReason, int] = field(hash=False)
    # A few skipped paths per reason, so a user can see why something is missing without a debugger.
    examples: Mapping[SkipReason, tuple[str, ...]] = field(hash=False)
    # Every folder the walk entered ("" is the root), sorted: exactly the folders a watcher must watch.
    dirs: tuple[str, ...] = ()
    # Every entry skipped as UNDECODABLE_NAME, by its printable path, sorted.
    undecodable: tuple[str, ...] = ()


class _Tally:
    def __init__(self) -> None:
        self.counts = dict.fromkeys(SkipReason, 0)
        self.examples: dict[SkipReason, list[str]] = {reason: [] for reason in SkipReason}

    def add(self, reason: SkipReason, rel_path: str) -> None:
        self.counts[reason] += 1
        if len(self.examples[reason]) < MAX_EXAMPLES_PER_REASON:
            self.examples[reason].append(printable_path(rel_path))


def is_decodable(rel_path: str) -> bool:
    """Whether a path read from the file system was UTF-8 there (it holds no lone surrogate)."""
    if rel_path.isascii():
        return True
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(rel_path: str) -> str:
    """A path as text any output can hold: each byte of a name that is not UTF-8 as ``\\xNN``."""
    if is_decodable(rel_path):
        return rel_path
    return os.fsencode(rel_path).decode("utf-8", "backslashreplace")


def undecodable_entry(root: Path, rel_path: str, rules: IgnoreRules) -> str | None:
    """For a workspace-relative path with a component that is not UTF-8, the printable path of the
    entry a full scan would list as UNDECODABLE_NAME (the first such component: the scan skips it
    with all it holds), or None when the scan would list nothing there (it is gone or ignored)."""
    parts = rel_path.split("/")
    depth = next((index for index, part in enumerate(parts, start=1) if not is_decodable(part)), None)
    if depth is None:
        return None
    entry = "/".join(parts[:depth])
    try:
        info = os.lstat(Path(root, entry))
    except OSError:
        return None
    if rules.is_ignored(entry, is_dir=stat.S_ISDIR(info.st_mode)):
        return None
    return printable_path(entry)


def is_secret_path(rel_path: str) -> bool:
    """Whether a workspace-relative path names a file that holds credentials, judged by name alone."""
    parts = rel_path.lower().split("/")
    return _is_secret_name(parts[-1]) or any(part in SECRET_DIR_NAMES for part in parts[:-1])


def _is_secret_name(name: str) -> bool:
    """The file-name half of `is_secret_path`; `name` must be lower case."""
    if name in SECRET_NAMES or name.startswith(SECRET_NAME_PREFIXES) or name.endswith(SECRET_NAME_SUFFIXES):
        return True
    return name.startswith(SECRET_DATA_STEMS) and name.endswith(SECRET_DATA_SUFFIXES)


def classify_content(data: bytes, path: str) -> SkipReason | None:
    """BINARY or MINIFIED for content not worth indexing, else None; `path` is workspace-relative."""
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return SkipReason.BINARY
    if sample and len(sample.translate(None, TEXT_BYTES)) > MAX_NON_TEXT_RATIO * len(sample):
        return SkipReason.BINARY
    if path.lower().endswith(MINIFIED_NAME_SUFFIXES):
        return SkipReason.MINIFIED
    if _has_long_line(data):
        return SkipReason.MINIFIED
    if len(data) >= MIN_BYTES_FOR_AVERAGE and len(data) > MAX_AVERAGE_LINE_CHARS * (data.count(b"\n") + 1):
        return SkipReason.MINIFIED
    return None


def _has_long_line(data: bytes) -> bool:
    if len(data) <= MAX_LINE_CHARS:
        return False
    first_newline = data.find(b"\n")
    if first_newline < 0 or first_newline > MAX_LINE_CHARS:
        return True
    return LONG_LINE_AFTER_NEWLINE.search(data, first_newline) is not None


def check_path(
    root: Path,
    rel_path: str,
    config: ScanConfig,
    is_supported: Callable[[str], bool],
    rules: IgnoreRules,
) -> ScannedFile | SkipReason | None:
    """The verdict a full scan would give one workspace-relative path, for a watcher event.

    Returns the file to index, why the scan skips it, or None when no file the scan could reach is there:
    the path is missing, a folder, another shard's file, or below a symbolic link to a folder (the scan
    never enters one).
    """
    parts = rel_path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    walker = _Walker(root, config, is_supported, rules)
    for depth in range(1, len(parts)):
        if Path(walker.root, *parts[:depth]).is_symlink():
            return None
    path = str(Path(walker.root, *parts))
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    if config.shard is not None and not config.shard.owns(rel_path):
        return None
    if rules.is_ignored(rel_path, is_dir=False):
        return SkipReason.IGNORED
    if not is_decodable(rel_path):
        return SkipReason.UNDECODABLE_NAME
    if is_secret_path(rel_path):
        return SkipReason.SECRET
    if stat.S_ISLNK(info.st_mode):
        return walker.classify_link(path, rel_path)
    return walker.classify_file(path, rel_path, follow_symlinks=False)


def scan(
    root: Path,
    config: ScanConfig,
    is_supported: Callable[[str], bool],
    rules: IgnoreRules | None = None,
    under: str = "",
) -> ScanResult:
    """Walk `root` once and return the files to index; never raises for unreadable entries.

    Pass `rules` to reuse an `IgnoreRules` the caller already holds (the indexer does); it must have been
    loaded for the same root. `under` (a workspace-relative folder) walks only that subtree, with the
    verdicts a walk from the root would give; nothing is found when the root walk would never enter it.
    """
    walker = _Walker(root, config, is_supported, rules)
    walker.run(under.strip("/"))
    files = tuple(sorted(walker.files, key=lambda scanned: scanned.path))
    return ScanResult(
        files=files,
        skipped=MappingProxyType(dict(walker.tally.counts)),
        examples=MappingProxyType({reason: tuple(paths) for reason, paths in walker.tally.examples.items()}),
        dirs=tuple(sorted(walker.dirs)),
        undecodable=tuple(sorted(walker.undecodable)),
    )


class _Walker:
    """One walk of a workspace; `classify_file` and `classify_link` also serve single-path checks."""

    def __init__(
        self,
        root: Path,
        config: ScanConfig,
        is_supported: Callable[[str], bool],
        rules: IgnoreRules | None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.root_with_sep = self.root.rstrip(os.sep) + os.sep
        self.config = config
        self.is_supported = is_supported
        self.rules = rules if rules is not None else IgnoreRules.load(Path(self.root), config)
        self.files: list[ScannedFile] = []
        self.dirs: list[str] = []
        self.undecodable: list[str] = []
        self.tally = _Tally()

    def run(self, under: str = "") -> None:
        matcher = self.rules.matcher_entering(under)
        if (
            matcher is None
            or any(part.lower() in SECRET_DIR_NAMES for part in under.split("/"))
            or not is_decodable(under)
        ):
            return
        # An explicit stack instead of recursion: deep trees cannot hit the recursion limit.
        pending: list[tuple[str, Matcher]] = [(under + "/" if under else "", matcher)]
        while pending:
            rel_dir, matcher = pending.pop()
            pending.extend(self._visit(rel_dir, matcher))

    def _record(self, rel: str, outcome: ScannedFile | SkipReason | None) -> None:
        if isinstance(outcome, ScannedFile):
            self.files.append(outcome)
        elif outcome is not None:
            self.tally.add(outcome, rel)

    def _visit(self, rel_dir: str, matcher: Matcher) -> list[tuple[str, Matcher]]:
        """Classify the entries of one folder and return its subfolders still to walk."""
        try:
            # Plain concatenation: building a Path per folder costs a third of the walk.
            with os.scandir(self.root_with_sep + rel_dir) as listing:
                entries = list(listing)
        except OSError:
            self.tally.add(SkipReason.UNREADABLE, rel_dir.rstrip("/") or ".")
            return []
        names = frozenset(entry.name for entry in entries)
        if rel_dir and is_environment_dir(names):
            self.tally.add(SkipReason.IGNORED, rel_dir.rstrip("/"))
            return []
        self.dirs.append(rel_dir.rstrip("/"))
        matcher = matcher.extend(self.rules.dir_layers(rel_dir, names))

        def siblings() -> frozenset[str]:
            return names

        subfolders: list[tuple[str, Matcher]] = []
        # Local names keep the per-entry loop, which runs for every file of the workspace, cheap.
        decide = matcher.decide
        add = self.tally.add
        shard = self.config.shard
        for entry in entries:
            name = entry.name
            rel = rel_dir + name
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                add(SkipReason.UNREADABLE, rel)
                continue
            if is_builtin_skip(name, is_dir, siblings) or decide(rel, name, is_dir):
                add(SkipReason.IGNORED, rel)
            elif not name.isascii() and not is_decodable(name):
                add(SkipReason.UNDECODABLE_NAME, rel)
                self.undecodable.append(printable_path(rel))
            elif is_dir:
                if name.lower() in SECRET_DIR_NAMES:
                    add(SkipReason.SECRET, rel)
                else:
                    subfolders.append((rel + "/", matcher))
            elif shard is not None and not shard.owns(rel):
                # Another shard's file: not skipped, only not this process's to index.
                continue
            elif _is_secret_name(name.lower()):
                add(SkipReason.SECRET, rel)
            elif is_link:
                self._record(rel, self.classify_link(entry.path, rel))
            else:
                self._record(rel, self.classify_file(entry.path, rel, follow_symlinks=False))
        return subfolders

    def classify_link(self, path: str, rel: str) -> ScannedFile | SkipReason | None:
        """The verdict for a symbolic link that is neither ignored nor secret by its own name.

        None for a link to a folder inside the root: it is not entered and its target is walked anyway.
        """
        target = os.path.realpath(path)
        if target != self.root and not target.startswith(self.root_with_sep):
            return SkipReason.SYMLINK_OUTSIDE
        try:
            target_stat = Path(target).stat()
        except OSError:
            return SkipReason.UNREADABLE
        if stat.S_ISDIR(target_stat.st_mode):
            return None
        target_rel = Path(os.path.relpath(target, self.root)).as_posix()
        if is_secret_path(target_rel):
            return SkipReason.SECRET
        if self.rules.is_ignored(target_rel, is_dir=False):
            return SkipReason.IGNORED
        return self.classify_file(target, rel, follow_symlinks=True)

    def classify_file(self, path: str, rel: str, follow_symlinks: bool) -> ScannedFile | SkipReason:
        """The verdict for a file that is neither ignored nor secret: language, type, size, permission."""
        if not self.is_supported(rel):
            return SkipReason.UNSUPPORTED
        try:
            file_stat = os.stat(path, follow_symlinks=follow_symlinks)  # noqa: PTH116 - needs follow_symlinks
        except OSError:
            return SkipReason.UNREADABLE
        if not stat.S_ISREG(file_stat.st_mode):
            return SkipReason.UNSUPPORTED
        if file_stat.st_size > self.config.max_file_bytes:
            return SkipReason.TOO_LARGE
        if not os.access(path, os.R_OK):
            return SkipReason.UNREADABLE
        return ScannedFile(rel, file_stat.st_size, file_stat.st_mtime_ns)
