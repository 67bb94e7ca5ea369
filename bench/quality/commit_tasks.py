"""The multi-language commit dev set: tasks taken from real commits of pinned public repositories.

A task is one commit: its message is the task text, and the answer key is what it changed in its
parent, in the parent's line numbering, as for SWE-bench Lite (``../shared/bench/README.md``):

- ``gold_files``: the non-test source files the commit modified or deleted (a file it creates does
  not exist in the parent, so no context pack can hold it);
- ``gold_changed``: ``[file, start, end]`` for each change of those files, from ``git diff -U0``: the
  lines the commit removes or replaces, and for a pure addition its anchor lines (the parent's line
  before and the line after the insertion point, those that exist);
- ``gold_functions``: ``file::Qualified.name`` of the innermost definition around each of those lines,
  found by smartctx's own parser in the parent's file (``<module>`` outside every definition), which
  is how SWE-bench Lite's ``gold_functions`` name them, so ``swebench_scoring.py`` scores both.

Which commits become tasks (``skip_reason``; each rule is a constant or a function below): commits
reachable from each repository's pinned head, newest first, that are not merges, reverts, releases or
version bumps, dependency updates, or changes of tests, docs, CI and non-source files only; whose
message says enough to be a task and whose change is one change (at most
``MAX_SOURCE_FILES`` source files). ``select_tasks`` takes the first ``per_repo`` that pass.

The API other benchmarks use (``bench/quality/focus.py``, issue #14): ``load_tasks(path)`` reads the task
file (``bench/out/commit_tasks.jsonl`` by default, written by ``bench/quality/commits.py extract``);
``task_git_dir(mirrors_dir, task)`` is the git directory that holds a task's commits;
``previous_author_commits(git_dir, task, limit)`` and ``commits_before(git_dir, task, window_hours)``
list the author's earlier commits and the commits of the preceding hours, each with the files it
changed that exist in the task's parent: the editor state to simulate. Both only see ancestors of
the task's parent, so the task's own commit never leaks into them.

The generated tasks go to ``bench/out/`` (git-ignored); this module holds only the rules and the
pinned commits that make the set reproducible.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

from tree_sitter import Language, Node, Parser

from bench.datasets import NEVER_TRAIN
from bench.quality.swebench_repos import mirror_path
from bench.quality.swebench_scoring import MODULE_NAME
from smartctx.core.model import Symbol, SymbolKind
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import LANGUAGES, language_for_path


@dataclass(frozen=True)
class DevRepo:
    """One repository of the set: its language (the row it is reported under) and its pinned head."""

    name: str
    language: str
    head: str


# The heads of the fetched copies on 2026-08-22: every task is a commit reachable from these, so the
# set is the same wherever the repositories are fetched later.
DEV_REPOS = (
    DevRepo("curl/curl", "c", "5c61e168698a72b87437d58ed728bcdea6d5db42"),
    DevRepo("jqlang/jq", "c", "579e6f76cffd7643ba4002a2c3618a5ea710589a"),
    DevRepo("spf13/cobra", "go", "adbc8813901bba65827259daa8e22ff94ec1f30e"),
    DevRepo("junegunn/fzf", "go", "956562daaa82ddf55ea8f7aeab56883377b742c6"),
    DevRepo("sharkdp/fd", "rust", "ee20f426ddf338ac7ead5c5f00ea49258005caaf"),
    DevRepo("sharkdp/bat", "rust", "2ba8db9c14e5794572f5ea338c2b90404c9769cb"),
    DevRepo("vitejs/vite", "typescript", "a98c8d95d552c6fa98ab66fb810f5b39ad5abf49"),
    DevRepo("apache/commons-lang", "java", "d15939ef46f0bd4144994df8be95cf5a7f91eb52"),
    DevRepo("sinatra/sinatra", "ruby", "cb22afd7902b566b6eaba6c4ea89739494a65d12"),
    DevRepo("heartcombo/devise", "ruby", "7ca7ed9c174525a4d36167441b35af4a0991b6af"),
    # Added on 2026-12-02 (heads of that day's fetch), where packs were weakest outside the set: Rust
    # and TypeScript.
    DevRepo("sharkdp/hyperfine", "rust", "327d5f4d9107141929f67f062bf9ef59f98b7399"),
    DevRepo("dandavison/delta", "rust", "f85c46ba8b913aa3208af0f3573db90286e56e18"),
    DevRepo("colinhacks/zod", "typescript", "e516c3baf22615e20934116abebfed6c000222c2"),
    DevRepo("honojs/hono", "typescript", "28a9c128912de19f3fb28b00ae289c9b93f6f392"),
)

# The training set of the learned ranking (issue #23 item 4): tasks mined by the same rules from other
# well-known repositories, none of them in ``../shared/bench/never_train.txt`` (the SWE-bench and dev
# set repositories, whose tasks evaluate the model) nor a fork of one. The heads of the copies fetched
# on 2026-12-02; this list is the source of the trained model's manifest.
TRAIN_REPOS = (
    DevRepo("pallets/click", "python", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369"),
    DevRepo("pallets/jinja", "python", "5ef70112a1ff19c05324ff889dd30405b1002044"),
    DevRepo("psf/black", "python", "8947c48ef2077c3a301b03c1e814dc2e3f78436e"),
    DevRepo("encode/httpx", "python", "ae1b9f66238f75ced3ced5e4485408435de10768"),
    DevRepo("python-attrs/attrs", "python", "c1dc5dcba16ed827aa6dcad896b41a3afedb4e32"),
    DevRepo("marshmallow-code/marshmallow", "python", "341b927f219205704728c05cd61f04d7e9727523"),
    DevRepo("networkx/networkx", "python", "cfc6b79fc53f583aa15a79b2187ae30bd4f480ed"),
    DevRepo("scrapy/scrapy", "python", "11079cb1c85b9e75a39a7269943c69d1a975d485"),
    DevRepo("aio-libs/aiohttp", "python", "495e778360d1924da63e16dba0f0d76baf56a56a"),
    DevRepo("tornadoweb/tornado", "python", "e530031405e2154654dedc4c84d5656b557ea310"),
    DevRepo("pypa/pip", "python", "6d309205789d368b2749d93fd6193d584811efd5"),
    DevRepo("sqlalchemy/alembic", "python", "20e58db01cad3432c24734e11b893303cdb687a4"),
    DevRepo("clap-rs/clap", "rust", "6982fb1c98c7247e38a6d4f04191b94e30497e7b"),
    DevRepo("alacritty/alacritty", "rust", "bdb72b32eeb074e3a0b8559d8ccac458237474a3"),
    DevRepo("starship/starship", "rust", "6f33dcec91b758ccbae4ed850eaa6feabff798f9"),
    DevRepo("typeorm/typeorm", "typescript", "281bfba42a5813b106bcf5ba79bc7f7251bd1e73"),
    DevRepo("excalidraw/excalidraw", "typescript", "4872083c044491b6d5c96ae134a75464f96d6831"),
    DevRepo("mermaid-js/mermaid", "typescript", "df032c942c32f805a7f4cd1cf30a565e610bc4f1"),
    DevRepo("cli/cli", "go", "44ee17760709bedf1cad7e452e61751489b81a33"),
    DevRepo("charmbracelet/bubbletea", "go", "73b6d91ac1c3854dd4af046ab5f9e51d3b3b4290"),
    DevRepo("tmux/tmux", "c", "c1f947a3c5bc72a40c32dead736f84c4628791ec"),
    DevRepo("libuv/libuv", "c", "6179e7af87413396d5853a1c3722c8b5749336c8"),
    DevRepo("square/retrofit", "java", "0b118105fe8436791436b8bc9c95b9aa2cfd3bdd"),
    DevRepo("rack/rack", "ruby", "8bf4eb078498edc9105fb04add80d89c5340e60b"),
    DevRepo("sidekiq/sidekiq", "ruby", "1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b"),
)

# A wider commit dev set where packs are weakest, Rust and TypeScript (issue #23 item 6): four more
# repositories, none in ``../shared/bench/never_train.txt``, ``TRAIN_REPOS`` or ``DEV_REPOS``, kept
# apart from ``DEV_REPOS`` so the 280 tasks of the dev set and their figures stay as they were. The
# heads of the copies fetched on 2026-12-03.
DEV_WIDE_REPOS = (
    DevRepo("helix-editor/helix", "rust", "079a789e8cb08ead67f19e1971a1b7438b37354b"),
    DevRepo("nushell/nushell", "rust", "3e1172d43cabb34afb798dfc9d8724839e18fe85"),
    DevRepo("TanStack/query", "typescript", "40321a0b1b3bdd0afa11f0e439642ab84cdf6afe"),
    DevRepo("ionic-team/stencil", "typescript", "30fc9f5985120e636eec8acbe2253145c97072d9"),
)

# Bug reports with a stack trace (issue #23): commits whose message quotes a Python traceback or a
# Java stack trace, the shape of a task pasted from a crash, in repositories no other set uses. The
# frame signals' weights are learned from it alone (``train_ranker.py --frames``, validated by
# holding its repositories out, then on SWE-bench Lite); no other weight ever sees it. The heads of
# the copies fetched on 2026-12-04 (ansible's, netty's and grpc-java's earlier).
TRACEBACK_REPOS = (
    DevRepo("ansible/ansible", "python", "c9ac477e53a99e95781f333eec3329a935c1bf95"),
    DevRepo("ipython/ipython", "python", "7f0ee55684f08f5af18190aa58d4bb3018fb20d2"),
    DevRepo("celery/celery", "python", "5dc781f0bd5f36186bfcc74e0a4f9f654452c69b"),
    DevRepo("twisted/twisted", "python", "64661601a1e492a9448ac1011deb9cd9467a9e30"),
    DevRepo("qutebrowser/qutebrowser", "python", "e688202adb6f99cf830e0917b62bdc899a61a973"),
    DevRepo("beetbox/beets", "python", "07f39c5204997a356fd98b7e88ba9b185efb2e66"),
    DevRepo("netty/netty", "java", "0bb88a3e061f77355627e7fd7fc170ffdada7578"),
    DevRepo("grpc/grpc-java", "java", "5fda0c7c35a938b2b0be05cdbe168dcb0700d64a"),
)

# The pinned sets by the name ``commits.py --set`` takes. ``train-described`` is the training set's
# repositories again, with only the commits whose message describes the change at an issue's length;
# ``train-changelog`` the commits that add a changelog entry, the entry as the task.
REPO_SETS = {
    "dev": DEV_REPOS,
    "dev-wide": DEV_WIDE_REPOS,
    "train": TRAIN_REPOS,
    "train-described": TRAIN_REPOS,
    "train-changelog": TRAIN_REPOS,
    "tracebacks": TRACEBACK_REPOS,
}
# The sets the ranking learns from: never a repository of ``forbidden_for_training``.
TRAINING_SETS = frozenset({"train", "train-described", "train-changelog"})


def never_train(path: Path = NEVER_TRAIN) -> frozenset[str]:
    """The lowercased owner/name of every repository in ``path``, or none when there is no such file."""
    if not path.exists():
        return frozenset()
    lines = (line.split("#", 1)[0].strip().lower() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line)


def forbidden_for_training(repos: Iterable[DevRepo], path: Path = NEVER_TRAIN) -> list[str]:
    """The repositories of ``repos`` that ``path`` forbids to train on, or that the dev set evaluates."""
    evaluated = (*DEV_REPOS, *DEV_WIDE_REPOS, *TRACEBACK_REPOS)
    forbidden = never_train(path) | {repo.name.lower() for repo in evaluated}
    return [repo.name for repo in repos if repo.name.lower() in forbidden]


DEFAULT_PER_REPO = 20
# Commits examined per repository before giving up on finding ``per_repo`` tasks: most skipped
# commits are dependency bumps and docs, and 600 holds at least 20 tasks in every pinned repository.
MAX_CANDIDATES = 600

# A message of fewer words ("Sort members.", "cargo fmt", "Javadoc") does not say what to do.
MIN_TASK_WORDS = 4
# More changed source files than this is a sweep (a rename, a reformat, a migration), not one task.
MAX_SOURCE_FILES = 10


# A task described as an issue is (SWE-bench Lite's median is 1,044 characters): a commit message of at
# least this many characters, trailers left out. A commit subject alone is a tenth of that (the
# training set's median is 73), and weights learned from subjects alone see no long task.
DESCRIBED_MIN_CHARS = 300
# Long messages are rarer than tasks: 3,000 commits hold 20 described tasks in every repository of
# the training set but aiohttp (17), where most commits are dependency bumps.
DESCRIBED_CANDIDATES = 3000


@dataclass(frozen=True)
class MessageRule:
    """What a commit's message must be for a set's task: match ``pattern`` (as ``git rev-list -E
    --grep`` reads it) and hold ``min_chars`` characters, among the newest ``candidates`` commits."""

    pattern: str | None = None
    min_chars: int = 0
    candidates: int = MAX_CANDIDATES
    # The task is the changelog entry the commit adds, not its message (``changelog_entry``).
    from_changelog: bool = False


# The sets whose tasks are only some commits' messages; the others take every commit the rules keep.
MESSAGE_RULES = {
    "tracebacks": MessageRule(
        pattern=r"Traceback \(most recent call last\)"
        r"|at [a-z][A-Za-z0-9_.$]+\([A-Za-z0-9_$]+\.java:[0-9]+\)"
    ),
    "train-described": MessageRule(min_chars=DESCRIBED_MIN_CHARS, candidates=DESCRIBED_CANDIDATES),
    "train-changelog": MessageRule(candidates=DESCRIBED_CANDIDATES, from_changelog=True),
}


class SkipReason(str, Enum):
    """Why a commit is not a task; the values are counted in the task file's header."""

    MERGE = "merge"
    ROOT = "root"
    REVERT = "revert"
    RELEASE = "release"  # a release or a version bump
    DEPENDENCY = "dependency"  # a dependency update
    NOT_PROGRAM_TYPE = "declared-non-program"  # a docs, test, ci, style, build or chore commit
    TESTS_ONLY = "tests-only"
    NO_SOURCE = "no-source"  # docs, examples, CI and files smartctx does not parse
    TOO_LARGE = "too-large"  # more than MAX_SOURCE_FILES source files
    NEW_FILES_ONLY = "new-files-only"  # nothing of the change exists in the parent
    TOO_SHORT = "too-short"  # a message under MIN_TASK_WORDS words
    UNDESCRIBED = "undescribed"  # a message under the set's MessageRule.min_chars
    UNREADABLE = "unreadable"  # the fetched history ends before it (a shallow snapshot)
    NO_CHANGELOG = "no-changelog"  # no changelog entry of MIN_TASK_WORDS words (a changelog set)
    REVIEW_FOLLOW_UP = "review-follow-up"  # the message says nothing of the change
    DUPLICATE = "duplicate"  # same subject or pull request as a newer task: a change applied twice
    COMMENTS_ONLY = "comments-only"  # documentation inside the source
    TEST_MODULES_ONLY = "test-modules-only"  # inline test modules (Rust's `mod tests`) only
    NO_CHANGED_LINES = "no-changed-lines"  # no changed line in a source file of the parent


# Reverts: git's own wording, subject and body.
_REVERT = re.compile(r"^revert\b|^this reverts commit [0-9a-f]{7,}", re.IGNORECASE | re.MULTILINE)
# Releases and version bumps, by subject: "Release v5.0.3", "release: v7.1.0", "v4.1.0",
# "chore(release): …", "[maven-release-plugin] prepare release", "Bump version to 10.2.0",
# "Prepare 4.1 release", "curl 8.15.0".
_RELEASE = re.compile(
    r"^(\[maven-release-plugin\]|chore\(release\)|(release|releasing)(:|\s+v?\d)|v?\d+\.\d+(\.\d+)*\s*$"
    r"|prepare\b.*\brelease\b|(bump|set|increase)(s|ed)?\b.*\bversion\b|update (the )?version (to|number)"
    r"|version \d|curl \d+\.\d+)",
    re.IGNORECASE,
)
# Dependency updates, by subject: "build(deps): bump regex from 1.12.3 to 1.13.1", "fix(deps): update
# all non-major dependencies", "Bump org.apache.commons:commons-parent from 103 to 104", "Bump pflag to
# 1.0.8" (every subject that starts with "Bump"), "Bundle update".
_DEPENDENCY = re.compile(
    r"^(build|chore|fix|ci)\(deps(-dev)?\)|^bump\b|\bbump\b.*\bfrom\b.*\bto\b|\bbundle update\b"
    r"|\b(update|upgrade|bump)s?\b.*\b(dependency|dependencies|deps)\b",
    re.IGNORECASE,
)
# Conventional-commit types that declare a change is not to the program: "docs: …", "test(hmr): …",
# "ci: …", "chore: …". A "chore" does touch source now and then, but as tooling, never as a task.
_NOT_PROGRAM_TYPE = re.compile(r"^(docs?|tests?|ci|style|build|chore)(\([^)]*\))?!?:", re.IGNORECASE)
# Authors that only ever update dependencies.
_DEPENDENCY_BOTS = ("dependabot", "renovate")

# Folders whose files are tests: the usual names in Python, Go, Rust, Java, Ruby and JavaScript, plus
# Vite's `playground/`, its end-to-end test projects, and `regress/`, tmux's (and PostgreSQL's).
_TEST_FOLDERS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "testdata",
        "spec",
        "specs",
        "__tests__",
        "__mocks__",
        "playground",
        "regress",
    }
)
# File names of tests outside those folders: `foo_test.go`, `jq_test.c`, `test_foo.py`,
# `FooTest.java`, `foo_spec.rb`, `foo.test.ts`, `foo.spec.ts`, `conftest.py`.
_TEST_NAME = re.compile(r"(^test_|_test\.|_spec\.|Tests?\.java$|\.(test|spec)\.[cm]?[jt]sx?$|^conftest\.py$)")
# Folders of documentation, examples and continuous integration: a commit that touches only these is
# not a change of the program.
_NON_PROGRAM_FOLDERS = frozenset(
    {"docs", "doc", "documentation", "man", "examples", "example", ".github", ".circleci", ".gitlab", "ci"}
)
# Packaging and tool configuration written in a parsed language: a gem's `.gemspec`, and
# `vite.config.ts`, `eslint.config.js` and the like.
_NON_PROGRAM_NAME = re.compile(r"(\.gemspec$|\.config\.[cm]?[jt]s$)")

# Trailer lines: "Key: value" with a key git or a project uses ("Signed-off-by: …", "Reported-by: …",
# "Closes: …"), curl's "Closes #123" / "Fixes #1", a bare reference URL ("Ref: https://…") and the
# dashes GitHub ends a squashed pull request's message with.
_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|helped-by|suggested-by"
    r"|assisted-by|cc|change-id|git-svn-id|follow-up-to|bug|closes|fixes|ref|refs|resolves|url):\s+\S.*$"
    r"|^(close[sd]?|fix(e[sd])?|resolve[sd]?|ref|refs|bug)\s+#\d+\.?$|^-{3,}$"
    r"|^(closes|fixes|ref|refs|see|url|bug|follow-up to|followup to)\s*:?\s+https?://\S+$"
    r"|^follow-up to [0-9a-f]{7,40}\b.*$|^\(cherry picked from commit [0-9a-f]+\)$",
    re.IGNORECASE,
)
# Subjects of review follow-ups ("address review comments", "improvements from PR review",
# "Apply suggestions from code review"): they say nothing of the change.
_REVIEW_FOLLOW_UP = re.compile(
    r"\b(review (comments?|feedback|suggestions?|remarks?)|(pr|code) review|address(es|ed|ing)? (the )?"
    r"(comments?|feedback)|apply suggestions?)\b",
    re.IGNORECASE,
)
_PULL_REQUEST = re.compile(r"#(\d+)")


def is_test_path(path: str) -> bool:
    """Whether ``path`` is test code in any of the set's languages (the gold never counts tests)."""
    *folders, name = PurePosixPath(path).parts
    return any(folder in _TEST_FOLDERS for folder in folders) or bool(_TEST_NAME.search(name))


def is_source_path(path: str) -> bool:
    """Whether ``path`` is program source: a language smartctx parses, not a test, not under a
    docs, examples or CI folder."""
    folders = PurePosixPath(path).parts[:-1]
    return (
        language_for_path(path) is not None
        and not is_test_path(path)
        and not any(folder.lower() in _NON_PROGRAM_FOLDERS for folder in folders)
        and not _NON_PROGRAM_NAME.search(path)
    )


def task_text(message: str) -> str:
    """The commit message as a task: subject and body with trailer lines and trailing space removed."""
    subject, *body = [line.rstrip() for line in message.strip().splitlines()]
    kept = [subject, *(line for line in body if not _TRAILER.match(line.strip()))]
    text = "\n".join(kept).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


# Changelog files: a project's running log (``CHANGES.rst``, ``CHANGELOG.md``, ``HISTORY.rst``,
# ``NEWS``) or a folder of one fragment per change (towncrier's ``news/`` and ``CHANGES/``,
# ``changelog.d/``, changesets' ``.changeset/``, ``unreleased/`` of zimports-style logs).
_CHANGELOG_PATH = re.compile(
    r"(^|/)(changes|changelog|history|news|release[_-]?notes)(\.(md|rst|txt|markdown|adoc))?$"
    r"|(^|/)(news|changes|changelog\.d|\.changeset|unreleased)/[^/]+$",
    re.IGNORECASE,
)
# What an entry holds besides its prose: reST directives and their fields (``.. change::``,
# ``:tags: bug``), Markdown headings, link definitions, a changeset's front matter (``'pkg':
# patch``) and heading underlines.
_CHANGELOG_MARKUP = re.compile(
    r"^\s*(\.\. |:[\w-]+:(\s|$)|#|\[[^\]]+\]:\s|['\"]?[\w@/.-]+['\"]?:\s*(patch|minor|major)\s*$"
    r"|changes from \S+ to \S+\s*$)",
    re.IGNORECASE,
)
# A release's heading ("2019.05.22, Version 1.29.1 (Stable)", "Changes since version 1.29.0"): the
# lines under it are the notes of a release, which lists many changes, not one.
_RELEASE_HEADING = re.compile(
    r"^\s*(\d{4}[.-]\d\d[.-]\d\d,?\s+)?version\s+v?\d+\.\d+|^\s*changes since version",
    re.IGNORECASE | re.MULTILINE,
)
# An entry longer than this is a release's notes (libuv's ``ChangeLog`` of a version, scrapy's
# highlights), not one change told.
MAX_CHANGELOG_CHARS = 2000
_UNDERLINE = re.compile(r"^\s*([-=~^*+])\1{2,}\s*$")
# Roles and references inside the prose: ``{issue}`2869```, ``:pr:`12```, ``(#1234)``, a link to a
# pull request, "-- by :user:`me`"; a role that names code keeps its name (``{func}`edit``` reads
# ``edit``).
_CHANGELOG_REFERENCE = re.compile(
    r"\{(issue|pr|user|ghuser|gh)\}`[^`]*`|:(issue|pr|user|ghuser|ticket|tickets|bug|gh)s?:`[^`]*`"
    r"|\[[^\]]*\]\(https?://github\.com/[^)]*\)|\(#\d+\)|#\d+|(\bby\s+|\(|thanks,?\s+)@[\w-]+\)?",
    re.IGNORECASE,
)
# What is left of a credit once its references are gone: "-- by ." and empty brackets.
_CREDIT = re.compile(r"\s*(--|—)\s*by\b[\s.,]*$|\s*\bby\s*[.,]\s*$|\s*(\[[\s,]*\]|\([\s,]*\))", re.IGNORECASE)
_CHANGELOG_ROLE = re.compile(r"(\{\w+\}|:\w+:)`~?([^`]*)`")
_BULLET = re.compile(r"^\s*([-*+]|\d+\.)\s+")


def is_changelog_path(path: str) -> bool:
    """Whether ``path`` is a changelog or a changelog fragment (never a source file: a module named
    ``changes.py`` or a ``news/`` package is code)."""
    return _CHANGELOG_PATH.search(path) is not None and language_for_path(path) is None


def changelog_entry(git_dir: Path, commit: Commit) -> str:
    """The prose of the changelog lines ``commit`` adds, without markup, references or bullets: what
    the change does, told to the project's users (as an issue is, and a commit message is not)."""
    paths = [
        change.new_path for change in commit.files if change.new_path and is_changelog_path(change.new_path)
    ]
    if not paths:
        return ""
    diff = _git(git_dir, "show", "--format=", "--unified=0", "--no-color", commit.sha, "--", *paths)
    added = [
        line[1:] for line in str(diff).splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    lines = []
    for index, text in enumerate(added):
        # A heading's own line goes with its underline (reST's ``HEAD`` over ``----``).
        underlined = index + 1 < len(added) and _UNDERLINE.match(added[index + 1])
        if underlined or _UNDERLINE.match(text) or _CHANGELOG_MARKUP.match(text):
            continue
        text = _CHANGELOG_REFERENCE.sub("", _BULLET.sub("", text))
        lines.append(" ".join(_CREDIT.sub("", _CHANGELOG_ROLE.sub(r"\2", text)).split()))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def word_count(text: str) -> int:
    """Words in ``text``: runs between spaces that hold a letter, so "(#2248)" is none and
    "src/cli.rs" is one."""
    return sum(1 for token in text.split() if any(char.isalpha() for char in token))


def pull_requests(subject: str) -> set[str]:
    """The pull request or issue numbers a subject names ("… (#1775)")."""
    return set(_PULL_REQUEST.findall(subject))


@dataclass(frozen=True)
class FileChange:
    """One file of a commit: git's status letter and its path in the parent (None when added) and in
    the commit (None when deleted)."""

    status: str
    old_path: str | None
    new_path: str | None

    @property
    def path(self) -> str:
        """The path that names the file in reports: the parent's, else the commit's."""
        return self.old_path or self.new_path or ""


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author_email: str
    author_date: str
    committer_date: str
    message: str
    files: tuple[FileChange, ...]

    @property
    def subject(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


def skip_reason(commit: Commit) -> SkipReason | None:
    """The first rule ``commit`` breaks, or None when it can be a task (before its gold is computed)."""
    if len(commit.parents) > 1:
        return SkipReason.MERGE
    if not commit.parents:
        return SkipReason.ROOT
    if _REVERT.search(commit.message):
        return SkipReason.REVERT
    if _RELEASE.match(commit.subject) or _RELEASE.match(_without_scope(commit.subject)):
        return SkipReason.RELEASE
    if any(bot in commit.author_email.lower() for bot in _DEPENDENCY_BOTS) or _DEPENDENCY.search(
        commit.subject
    ):
        return SkipReason.DEPENDENCY
    if _NOT_PROGRAM_TYPE.match(commit.subject):
        return SkipReason.NOT_PROGRAM_TYPE
    source = [change for change in commit.files if is_source_path(change.path)]
    if not source:
        tests_only = bool(commit.files) and all(is_test_path(change.path) for change in commit.files)
        return SkipReason.TESTS_ONLY if tests_only else SkipReason.NO_SOURCE
    if len(source) > MAX_SOURCE_FILES:
        return SkipReason.TOO_LARGE
    if all(change.old_path is None for change in source):
        return SkipReason.NEW_FILES_ONLY
    if word_count(task_text(commit.message)) < MIN_TASK_WORDS:
        return SkipReason.TOO_SHORT
    if _REVIEW_FOLLOW_UP.search(commit.subject):
        return SkipReason.REVIEW_FOLLOW_UP
    return None


def _without_scope(subject: str) -> str:
    """A subject without its conventional-commit type or area ("lib: bump version" -> "bump version")."""
    return re.sub(r"^[\w-]+(\([^)]*\))?!?:\s*", "", subject)


def _git(git_dir: Path, *args: str, text: bool = True) -> Any:
    completed = subprocess.run(
        ["git", "--git-dir", str(git_dir), "-c", "core.quotePath=false", *args],
        capture_output=True,
        text=text,
        check=False,
    )
    if completed.returncode != 0:
        error = completed.stderr if text else completed.stderr.decode(errors="replace")
        raise RuntimeError(f"git {' '.join(args[:3])} in {git_dir} failed: {error.strip()}")
    return completed.stdout


def read_commit(git_dir: Path, sha: str) -> Commit:
    """One commit with its files as git reports them against its first parent (renames detected)."""
    header = _git(git_dir, "show", "-s", "--format=%H%x00%P%x00%ae%x00%aI%x00%cI%x00%B", sha)
    full, parents, email, author_date, committer_date, message = header.split("\0", 5)
    files: tuple[FileChange, ...] = ()
    parent_list = tuple(parents.split())
    if len(parent_list) == 1:
        listing = _git(git_dir, "diff-tree", "-r", "-z", "-M", "--no-commit-id", "--name-status", sha)
        files = tuple(_name_status(listing.split("\0")))
    return Commit(full, parent_list, email, author_date, committer_date, message, files)


def _name_status(fields: list[str]) -> Iterator[FileChange]:
    """Parse ``git diff-tree -z --name-status``: a status, then one path (two for renames and copies)."""
    position = 0
    while position < len(fields) and fields[position]:
        status = fields[position][0]
        if status in "RC":
            old, new = fields[position + 1], fields[position + 2]
            position += 3
            # A copy leaves its source as it was: only the new file is a change.
            yield FileChange(status, old if status == "R" else None, new)
            continue
        path = fields[position + 1]
        position += 2
        yield FileChange(status, None if status == "A" else path, None if status == "D" else path)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass(frozen=True)
class Hunk:
    """One change of a ``git diff -U0``: ``old_count`` lines from ``old_start`` in the parent become
    ``new_count`` lines from ``new_start`` in the commit (a count of 0 places the change after that
    line)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int

    def removed(self) -> range:
        return range(self.old_start, self.old_start + self.old_count)

    def added(self) -> range:
        return range(self.new_start, self.new_start + self.new_count)


def parse_hunks(diff: str) -> list[Hunk]:
    return [
        Hunk(int(match[1]), int(match[2] or "1"), int(match[3]), int(match[4] or "1"))
        for match in _HUNK.finditer(diff)
    ]


def changed_range(hunk: Hunk, parent_lines: int) -> tuple[int, int] | None:
    """The hunk's lines in the parent's numbering: the removed lines, or for a pure addition after
    parent line ``a`` its anchors ``a`` and ``a + 1`` (those that exist in a file of ``parent_lines``)."""
    if hunk.old_count:
        return hunk.old_start, hunk.old_start + hunk.old_count - 1
    anchors = [line for line in (hunk.old_start, hunk.old_start + 1) if 1 <= line <= parent_lines]
    return (anchors[0], anchors[-1]) if anchors else None


def enclosing_name(symbols: Sequence[Symbol], line: int) -> str:
    """The qualified name of the innermost definition around ``line``, or ``MODULE_NAME``.

    A language's own module (Ruby ``module``, Rust ``mod``, a TypeScript namespace) is no definition
    here: the index stores it as a module node, which the scorer names ``MODULE_NAME`` like the
    file's own, so a line directly inside one is ``MODULE_NAME`` too.
    """
    around = [
        symbol
        for symbol in symbols
        if symbol.span.start_line <= line <= symbol.span.end_line and symbol.kind is not SymbolKind.MODULE
    ]
    if not around:
        return MODULE_NAME
    innermost = min(around, key=lambda s: (s.span.end_line - s.span.start_line, -s.span.start_line))
    return innermost.qualified_name


def in_test_module(symbols: Sequence[Symbol], line: int) -> bool:
    """Whether ``line`` sits in an inline test module (Rust's ``mod tests``): test code inside a
    source file."""
    return any(
        part in _TEST_MODULES
        for symbol in symbols
        if symbol.span.start_line <= line <= symbol.span.end_line
        for part in symbol.qualified_name.split(".")
    )


_TEST_MODULES = frozenset({"test", "tests"})


class CommentLines:
    """Which lines of a file are comments, by tree-sitter's own comment nodes (every grammar of the
    set names them ``comment``, ``line_comment`` or ``block_comment``)."""

    def __init__(self) -> None:
        self._parsers: dict[str, Parser] = {}

    def _parser(self, language: str) -> Parser:
        parser = self._parsers.get(language)
        if parser is None:
            spec = LANGUAGES[language]
            module = importlib.import_module(spec.grammar_module)
            parser = self._parsers[language] = Parser(Language(getattr(module, spec.grammar_entry)()))
        return parser

    def only_comments(self, source: bytes, language: str, lines: Iterable[int]) -> bool:
        """Whether each of ``lines`` (1-based) is blank or lies inside a comment node."""
        text_lines = source.split(b"\n")
        root = self._parser(language).parse(source).root_node
        for line in lines:
            text = text_lines[line - 1] if line <= len(text_lines) else b""
            if not text.strip():
                continue
            first = len(text) - len(text.lstrip())
            node: Node | None = root.descendant_for_point_range(
                (line - 1, first), (line - 1, len(text.rstrip()))
            )
            while node is not None and "comment" not in node.type:
                node = node.parent
            if node is None:
                return False
        return True


@dataclass(frozen=True)
class FileDiff:
    """One changed source file that exists in the parent: both versions and the changes between them."""

    old_path: str
    new_path: str | None
    parent_source: bytes
    new_source: bytes
    hunks: tuple[Hunk, ...]

    @property
    def parent_lines(self) -> int:
        source = self.parent_source
        return source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)


def file_diffs(git_dir: Path, commit: Commit) -> list[FileDiff]:
    """The source files of ``commit`` that exist in its parent, with their changes."""
    parent = commit.parents[0]
    diffs = []
    for change in commit.files:
        if change.old_path is None or not is_source_path(change.old_path):
            continue
        old = change.old_path
        source: bytes = _git(git_dir, "cat-file", "blob", f"{parent}:{old}", text=False)
        if change.new_path is None:
            # A deleted file: every line of it is removed.
            line_count = FileDiff(old, None, source, b"", ()).parent_lines
            hunks = (Hunk(1, line_count, 0, 0),) if line_count else ()
            diffs.append(FileDiff(old, None, source, b"", hunks))
            continue
        after = f"{commit.sha}:{change.new_path}"
        new_source: bytes = _git(git_dir, "cat-file", "blob", after, text=False)
        diff = _git(git_dir, "diff", "-U0", "--no-color", "--no-ext-diff", f"{parent}:{old}", after)
        diffs.append(FileDiff(old, change.new_path, source, new_source, tuple(parse_hunks(diff))))
    return diffs


def comments_only(diffs: Sequence[FileDiff], comments: CommentLines) -> bool:
    """Whether every line the commit removes or adds in its source files is a comment or blank."""
    for diff in diffs:
        language = language_for_path(diff.old_path)
        if language is None:
            return False
        removed = [line for hunk in diff.hunks for line in hunk.removed()]
        added = [line for hunk in diff.hunks for line in hunk.added()]
        if not comments.only_comments(diff.parent_source, language, removed):
            return False
        if not comments.only_comments(diff.new_source, language, added):
            return False
    return True


@dataclass(frozen=True)
class TaskGold:
    files: tuple[str, ...]
    changed: tuple[tuple[str, int, int], ...]
    functions: tuple[str, ...]
    # Changes that fell inside inline test modules and were left out of the gold.
    test_changes: int = 0


def compute_gold(diffs: Sequence[FileDiff], parser: SourceParser) -> TaskGold:
    """The gold of a commit in its parent (see the module docstring); changes inside an inline test
    module are test code and left out."""
    files: list[str] = []
    changed: list[tuple[str, int, int]] = []
    functions: dict[str, None] = {}
    test_changes = 0
    for diff in diffs:
        language = language_for_path(diff.old_path)
        symbols = parser.parse(diff.parent_source, language).symbols if language else ()
        for hunk in diff.hunks:
            lines = changed_range(hunk, diff.parent_lines)
            if lines is None:
                continue
            program = [line for line in range(lines[0], lines[1] + 1) if not in_test_module(symbols, line)]
            if not program:
                test_changes += 1
                continue
            if diff.old_path not in files:
                files.append(diff.old_path)
            changed.append((diff.old_path, *lines))
            functions.update((f"{diff.old_path}::{enclosing_name(symbols, line)}", None) for line in program)
    return TaskGold(tuple(files), tuple(changed), tuple(functions), test_changes)


@dataclass
class RepoSelection:
    """The tasks found in one repository and what was skipped on the way."""

    repo: DevRepo
    tasks: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    examined: int = 0


def candidate_shas(git_dir: Path, head: str, rule: MessageRule) -> list[str]:
    """The newest ``rule.candidates`` commits reachable from ``head`` (merges included, so the merge
    rule is applied and counted like every other rule); only those whose message matches
    ``rule.pattern`` when there is one."""
    grep = ["-E", f"--grep={rule.pattern}"] if rule.pattern else []
    listing = _git(git_dir, "rev-list", "--date-order", f"--max-count={rule.candidates}", *grep, head)
    return listing.split()


def judge_change(
    diffs: Sequence[FileDiff], parser: SourceParser, comments: CommentLines
) -> tuple[TaskGold, SkipReason | None]:
    """The gold of a commit's source changes, and the rule they break if they are only comments, only
    inline tests or no line at all."""
    gold = compute_gold(diffs, parser)
    if comments_only(diffs, comments):
        return gold, SkipReason.COMMENTS_ONLY
    if not gold.changed:
        return gold, SkipReason.TEST_MODULES_ONLY if gold.test_changes else SkipReason.NO_CHANGED_LINES
    return gold, None


def judge_message(git_dir: Path, commit: Commit, rule: MessageRule) -> tuple[str | None, SkipReason | None]:
    """The task's text when it is not the commit's message (the changelog entry ``rule`` asks for),
    and the part of ``rule`` the commit breaks: too short a message, no entry, or a release's notes."""
    if len(task_text(commit.message)) < rule.min_chars:
        return None, SkipReason.UNDESCRIBED
    if not rule.from_changelog:
        return None, None
    entry = changelog_entry(git_dir, commit)
    if word_count(entry) < MIN_TASK_WORDS:
        return entry, SkipReason.NO_CHANGELOG
    if len(entry) > MAX_CHANGELOG_CHARS or _RELEASE_HEADING.search(entry):
        return entry, SkipReason.RELEASE
    return entry, None


def select_tasks(
    repo: DevRepo,
    git_dir: Path,
    per_repo: int = DEFAULT_PER_REPO,
    parser: SourceParser | None = None,
    rule: MessageRule = MessageRule(),
) -> RepoSelection:
    """The newest ``per_repo`` commits before ``repo.head`` that pass every rule and whose message is
    as ``rule`` asks, as task rows."""
    parser = parser or SourceParser()
    comments = CommentLines()
    selection = RepoSelection(repo)
    subjects: set[str] = set()
    numbers: set[str] = set()
    for sha in candidate_shas(git_dir, repo.head, rule):
        if len(selection.tasks) >= per_repo:
            break
        selection.examined += 1
        try:
            commit = read_commit(git_dir, sha)
        except RuntimeError:
            # A fetched snapshot's history can end in commits git lists but does not hold: the
            # older ones cannot be read either.
            selection.skipped[SkipReason.UNREADABLE.value] += 1
            break
        subject = commit.subject.strip().rstrip(".").lower()
        entry: str | None = None
        reason = skip_reason(commit)
        if reason is None:
            entry, reason = judge_message(git_dir, commit, rule)
        if reason is None and (subject in subjects or pull_requests(subject) & numbers):
            reason = SkipReason.DUPLICATE
        if reason is not None:
            selection.skipped[reason.value] += 1
            continue
        gold, reason = judge_change(file_diffs(git_dir, commit), parser, comments)
        if reason is not None:
            selection.skipped[reason.value] += 1
            continue
        subjects.add(subject)
        numbers |= pull_requests(subject)
        selection.tasks.append(task_row(repo, git_dir, commit, gold, entry))
    return selection


def task_row(
    repo: DevRepo, git_dir: Path, commit: Commit, gold: TaskGold, text: str | None = None
) -> dict[str, Any]:
    """One task in the shape of a SWE-bench Lite row (so ``swebench.py``'s machinery runs it) plus
    the commit's own facts; ``text`` is the task when it is not the commit's message (a changelog
    entry), and the task's id says so: it is another task than the message's, of the same commit."""
    parent = commit.parents[0]
    parent_date = str(_git(git_dir, "show", "-s", "--format=%cI", parent)).strip()
    owner, name = repo.name.split("/")
    return {
        "instance_id": f"{owner}__{name}-{commit.sha[:10]}{'' if text is None else '-changelog'}",
        "repo": repo.name,
        "language": repo.language,
        "commit": commit.sha,
        "base_commit": parent,
        "base_commit_date": parent_date,
        "author_email": commit.author_email,
        "author_date": commit.author_date,
        "committer_date": commit.committer_date,
        "problem_statement": task_text(commit.message) if text is None else text,
        "gold_files": list(gold.files),
        "gold_changed": [list(change) for change in gold.changed],
        "gold_functions": list(gold.functions),
        # Every file the commit touched besides the gold (tests, docs, new files), for reference.
        "other_files": [change.path for change in commit.files if change.path not in gold.files],
    }


def extract(
    mirrors_dir: Path,
    repos: Iterable[DevRepo] = DEV_REPOS,
    per_repo: int = DEFAULT_PER_REPO,
    rule: MessageRule = MessageRule(),
) -> list[RepoSelection]:
    """Select the tasks of every repository from its fetched copy."""
    parser = SourceParser()
    return [select_tasks(repo, mirror_path(mirrors_dir, repo.name), per_repo, parser, rule) for repo in repos]


def write_tasks(path: Path, selections: Sequence[RepoSelection]) -> None:
    """The tasks as JSON lines, and beside them (``<name>.meta.json``) the pinned heads and the skip
    counts of each repository."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [task for selection in selections for task in selection.tasks]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    meta = {
        selection.repo.name: {
            **asdict(selection.repo),
            "tasks": len(selection.tasks),
            "examined": selection.examined,
            "skipped": dict(sorted(selection.skipped.items())),
        }
        for selection in selections
    }
    meta_path(path).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def meta_path(tasks_path: Path) -> Path:
    return tasks_path.with_name(tasks_path.stem + ".meta.json")


def load_tasks(path: Path) -> list[dict[str, Any]]:
    """The task rows written by ``write_tasks``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def task_git_dir(mirrors_dir: Path, task: dict[str, Any]) -> Path:
    """The git directory (a fetched copy) that holds ``task``'s commits."""
    return mirror_path(mirrors_dir, str(task["repo"]))


@dataclass(frozen=True)
class PastCommit:
    """A commit before a task, with the files it changed that still exist in the task's parent."""

    sha: str
    author_email: str
    author_date: str
    files: tuple[str, ...]


def _past_commits(git_dir: Path, parent: str, *options: str) -> Iterator[PastCommit]:
    """Non-merge ancestors of ``parent`` (itself included), newest first, filtered by ``options``."""
    listing = _git(
        git_dir,
        "log",
        "--no-merges",
        "--date-order",
        "--format=%x1e%H%x1f%ae%x1f%aI",
        "--name-only",
        *options,
        parent,
    )
    present = set(_git(git_dir, "ls-tree", "-r", "--name-only", parent).splitlines())
    for chunk in listing.split("\x1e")[1:]:
        header, _, names = chunk.partition("\n")
        sha, email, date = header.split("\x1f")
        files = tuple(name for name in names.splitlines() if name and name in present)
        yield PastCommit(sha, email, date, files)


def previous_author_commits(git_dir: Path, task: dict[str, Any], limit: int = 1) -> list[PastCommit]:
    """The task author's last ``limit`` commits before the task, among the ancestors of its parent
    (the task's own commit is never one)."""
    email = str(task["author_email"])
    found = []
    for commit in _past_commits(git_dir, str(task["base_commit"]), "--fixed-strings", f"--author=<{email}>"):
        if commit.author_email == email:
            found.append(commit)
        if len(found) >= limit:
            break
    return found


def commits_before(git_dir: Path, task: dict[str, Any], window_hours: float = 24.0) -> list[PastCommit]:
    """The ancestors of the task's parent authored in the ``window_hours`` before the task's author
    date, newest first."""
    until = datetime.fromisoformat(str(task["author_date"]))
    since = until - timedelta(hours=window_hours)
    # git's --since filters by committer date, which is never before the author date of a commit
    # authored in the window; a day of slack covers clocks that disagree.
    listed = _past_commits(
        git_dir, str(task["base_commit"]), f"--since={(since - timedelta(days=1)).isoformat()}"
    )
    return [commit for commit in listed if since <= datetime.fromisoformat(commit.author_date) < until]
