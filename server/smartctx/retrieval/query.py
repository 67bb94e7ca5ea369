"""Understanding the task text: prose, code, tracebacks, paths and dotted names, mixed.

The result is a set of weighted search words plus the exact things the task names (identifiers,
files, stack frames). Every input string is valid: the parser only ever extracts; nothing it returns
is query syntax, so hostile text cannot raise.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import takewhile

from smartctx.core.context import Warning
from smartctx.core.identifiers import split_identifier, whole_word
from smartctx.retrieval.environment_reports import without_environment
from smartctx.retrieval.file_kinds import is_test_path

# How much more a word counts by where it appeared. A plain prose word is 1.
IDENTIFIER_WEIGHT = 3
CODE_SPAN_WEIGHT = 3
DOTTED_NAME_WEIGHT = 3
FILE_PATH_WEIGHT = 2
SPLIT_PART_WEIGHT = 1
# A word of the task's first line, its title (an issue's, a commit's subject), counts this many times
# its weight: the title says in a few words what the rest explains, quotes and pastes. Chosen on the
# commit training set (x1, 2, 3, 4: 64.3, 64.8, 64.2, 64.0 % file Acc@1); a one-line task is all
# title, and its words keep their weights relative to each other.
TITLE_FACTOR = 2
# In the whole-file search a word the task says again counts more, as BM25 counts a query's repeated
# terms (its k3): a word said n times weighs (k + 1) * n / (k + n) times as much, 1.25 for twice,
# approaching 1.5. A bug report names the part of the code it is about again and again, in its
# prose and its code, and a passing word once. A quoted stack trace's frames are not counted, and a
# word only they say does not search whole files: their paths repeat the folders and libraries of
# every frame, and the frames point at their own files (search.py). Not in the definitions' search,
# where the same factor, tried, lost as many functions as it found. Chosen on the sets of the
# training repositories (bench/HISTORY.md, *A word the task says again weighs more in the whole-file
# search*): on the tracebacks file Acc@1 73.4 -> 77.3 %, on the changelog entries 62.8 -> 63.1 %.
REPEAT_SATURATION = 0.5
# A first line longer than this is no title but a line of pasted output (a one-line log), and none of
# its words counts more: reading a megabyte-long line as a title would cost a quarter of a second.
MAX_TITLE_CHARS = 1_000
# A title that starts with a scope, as commit subjects and many issue titles do ("lsp: hover shows
# …", "fix(preact-query): …", "config-win32.h: …"), names the part of the project it is about: a
# folder, a package or a file. A change type before the colon ("fix:", "BUG:", "ENH:") is no scope.
_TITLE_SCOPE = re.compile(
    r"\s*(?:[A-Za-z]{1,20}\((?P<scopes>[^()\n]{1,100})\)|(?P<scope>[\w.+/-]{2,60}))!?:\s"
)
_SCOPE_SEPARATORS = re.compile(r"[\s,/{}*]+")
# Scopes written as a shell's braces: ``{react,preact}-query`` is react-query and preact-query.
_SCOPE_BRACES = re.compile(r"([\w.-]*)\{([\w.,-]*)\}([\w.-]*)")
CHANGE_TYPES = frozenset(
    {
        "api",
        "bld",
        "breaking",
        "bug",
        "bugfix",
        "build",
        "chore",
        "ci",
        "cleanup",
        "dep",
        "deps",
        "doc",
        "docs",
        "enh",
        "enhancement",
        "feat",
        "feature",
        "fix",
        "hotfix",
        "maint",
        "maintenance",
        "major",
        "minor",
        "misc",
        "mnt",
        "perf",
        "refactor",
        "rel",
        "release",
        "revert",
        "security",
        "style",
        "sty",
        "test",
        "tests",
        "tst",
        "typing",
        "wip",
    }
)
# Words longer than this are data (hashes, base64), not names.
MAX_WORD_CHARS = 60
# The most task text that is read, in characters (about 1 MB of ASCII). A longer task (a whole log
# pasted in) is read as its first and last halves of this, so that both an issue's opening and a
# log's final traceback count; the middle is left out, and the pack says so (task-truncated).
MAX_TASK_CHARS = 1_000_000
# A task longer than MAX_TASK_CHARS is echoed back in the pack (taskDescription) as its first this
# many characters, with a note of its length: an answer never carries a huge task back whole.
ECHOED_TASK_CHARS = 2_000
# Bounds that keep a 20k-character log from turning into a 5k-term query. The parser keeps more
# words than a query may have; search chooses among them by how rare each is in the index.
MAX_PARSED_WORDS = 128
MAX_NAMED = 64

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "else",
        "even",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "like",
        "make",
        "makes",
        "me",
        "more",
        "most",
        "much",
        "must",
        "my",
        "need",
        "needs",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "see",
        "seems",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "us",
        "use",
        "used",
        "using",
        "very",
        "via",
        "want",
        "was",
        "way",
        "we",
        "well",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "yet",
        "you",
        "your",
        "issue",
        "bug",
        "error",
        "problem",
        "fix",
        "fixed",
        "fails",
        "failing",
        "expected",
        "actual",
        "instead",
        "trying",
        "tried",
        "works",
        "work",
        "example",
        "following",
        "currently",
        "case",
        "cases",
        "behaviour",
        "behavior",
        "version",
        "thanks",
        "hi",
        "hello",
        "please",
    ]
)

# A traceback pasted through JSON or a shell string keeps its quotes escaped (``File \"x.py\", line 3``).
_FRAME_PYTHON = re.compile(r'File \\?"([^"\n]{1,400}?)\\?", line (\d{1,7})(?:, in ([^\s,]{1,200}))?')
# A JVM stack frame, ``at io.netty.handler.Codec$Inner.decode(Codec.java:420)``: the class's package
# says the folders above its source file, and the frame names its method.
_FRAME_JVM = re.compile(
    r"\bat ((?:[A-Za-z_$][\w$]{0,100}\.){1,30})([\w$<>]{1,200})"
    r"\(([\w$]{1,200}\.(?:java|kt|scala|groovy)):(\d{1,7})\)"
)
_JVM_LAMBDA = re.compile(r"lambda\$(\w+?)\$\d+")
# A frame's path starts where a run of path characters starts: tried from every character of a long
# run instead, the bounded repeat made a 1 MB task of dotted words take seconds.
_FRAME_GENERIC = re.compile(r"(?<![\w./\\-])([\w./\\-]{1,300}\.[A-Za-z]{1,5}):(\d{1,7})(?::\d+)?")
_SOURCE_SUFFIXES = "py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|cs|rb|php|kt|scala|sh|lua"
_FILE_PATH = re.compile(rf"(?<![\w/.])((?:[\w.-]+/)*[\w-]+\.(?:{_SOURCE_SUFFIXES}))\b")
_DOTTED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
# "add a test", "write unit tests", "flaky tests", "the test suite": a task about tests.
_TESTS_WANTED = re.compile(
    r"\b(?:write|writing|add|adding|create|update|fix|fixing|improve|extend|missing|more|new|flaky)\s+"
    r"(?:(?:a|an|the|some|unit|integration|regression|end-to-end|e2e)\s+){0,3}(?:unit ?)?tests?\b"
    r"|\btest (?:coverage|suite)\b",
    re.IGNORECASE,
)
_STARTS_WITH_TESTS = re.compile(r"\s*(?:the\s+)?(?:unit ?)?tests?\b", re.IGNORECASE)
_CODE_SPAN = re.compile(r"`([^`\n]{1,400})`")
# A fence's info string ("python", "console") is short and holds no backtick: read unbounded, a text
# of fences with no line break ran on to its end from each one, a quadratic search.
_CODE_BLOCK = re.compile(r"```[^\n`]{0,100}\n(.*?)(?:```|\Z)", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The first line with text, read no further than one character past the longest title: a task of
# a megabyte is not copied to find its first line.
_TITLE = re.compile(rf"\s*([^\n]{{0,{MAX_TITLE_CHARS + 1}}})")
# An HTML comment in Markdown (``<!-- … -->``) is not shown where the text is read: in an issue or a
# pull request it is the template's instructions ("Explain what this PR does and why … Good
# examples: …"), words of the form and not of the task, the same in every task of a repository.
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
_FENCE = "```"


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    # The function the frame names, where its format gives one (Python's "in clean").
    function: str = ""


@dataclass(frozen=True)
class ParsedTask:
    """What the retrieval stages need from the task text."""

    words: dict[str, int]
    identifiers: tuple[str, ...]
    dotted_names: tuple[str, ...]
    file_paths: tuple[str, ...]
    # The stack frames the task quotes, innermost first.
    frames: tuple[Frame, ...]
    # The task asks for tests in so many words ("add a test", "flaky tests", "Tests fail on …").
    asks_for_tests: bool = field(default=False)
    # Test files the task names outside quoted stack frames: a task about tests when the workspace
    # holds them (search.py), a reporter's own script (``test_repro.py``) when it does not.
    test_paths: tuple[str, ...] = ()
    # The scopes the title starts with, lower-cased (``fix(lsp, hover):`` -> lsp, hover).
    scopes: tuple[str, ...] = ()
    # Words that only ever appeared as plain prose (never in a name, code or a path): the ones an
    # inflection of ("registering") may stand for another form in the code ("register").
    prose: frozenset[str] = field(default_factory=frozenset)
    # How many times the task says each of ``words`` outside its quoted stack frames, in any of its
    # forms (0 for a word only a frame says): what the whole-file search weighs them by besides
    # (``repeat_factor``).
    said: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BoundedTask:
    """A task as the pipeline takes it: the text it reads, the text the pack echoes back, and the
    warning that says what was left out (None when the task is read whole)."""

    text: str
    description: str
    warning: Warning | None = None


def bound_task(task: str) -> BoundedTask:
    """The task within ``MAX_TASK_CHARS``: whole if it fits, else its first and last halves of that."""
    if len(task) <= MAX_TASK_CHARS:
        return BoundedTask(task, task)
    half = MAX_TASK_CHARS // 2
    read = f"{half:,} characters"
    return BoundedTask(
        text=f"{task[:half]}\n…\n{task[-half:]}",
        description=(
            f"{task[:ECHOED_TASK_CHARS]} … [the task is {len(task):,} characters long; this is its start]"
        ),
        warning=Warning(
            "task-truncated",
            f"the task is {len(task):,} characters long and at most {MAX_TASK_CHARS:,} are read: its first"
            f" {read} and its last {read}; the names and the rarest words of those are searched",
        ),
    )


def _looks_like_identifier(word: str) -> bool:
    """A name from code rather than prose: snake_case, camelCase, CAPS, dunder or with digits."""
    if "_" in word or any(ch.isdigit() for ch in word):
        return True
    return any(ch.isupper() for ch in word[1:]) or (word.isupper() and len(word) > 1)


def _asks_for_tests(text: str) -> bool:
    """Whether the task's words ask for tests: to write, fix or extend them, or it starts with
    "test(s)".

    Saying "test" in passing ("in my test the total is wrong", "This is a test") is not enough, and
    neither is naming a ``test_…`` function: bug reports quote the test that shows the bug, and
    their fix is in the code. Words that merely contain "test" ("untested", "pytest") never count.
    """
    return _TESTS_WANTED.search(text) is not None or _STARTS_WITH_TESTS.match(text) is not None


def _taken(pattern: re.Pattern[str], text: str) -> tuple[list[tuple[str, ...]], str]:
    """Each match of ``pattern`` in ``text`` (its groups, "" for one that took no part), and the text
    with every match blanked out: one pass reads a kind of frame and leaves the rest to the next."""
    found: list[tuple[str, ...]] = []

    def take(match: re.Match[str]) -> str:
        found.append(match.groups(default=""))
        return " "

    return found, pattern.sub(take, text)


def _jvm_frame(owner: str, method: str, file: str, line: str) -> Frame:
    """A JVM frame as a path and a function: the owner's package as the folders above its source
    file (``io/netty/handler/Codec.java``); a constructor (``<init>``) named after its class, a
    lambda after the method that holds it, a class initialiser after nothing."""
    parts = owner.rstrip(".").split(".")
    package = list(takewhile(lambda part: not part[:1].isupper(), parts[:-1]))
    if method == "<init>":
        function = parts[-1].rsplit("$", 1)[-1]
    elif lambda_of := _JVM_LAMBDA.match(method):
        function = lambda_of.group(1)
    else:
        function = "" if method.startswith("<") else method
    return Frame("/".join([*package, file]), int(line), function)


def without_comments(text: str) -> str:
    """``text`` without its Markdown HTML comments, those outside fenced code (where ``<!--`` is
    code, shown as it is); a comment never closed is kept, as it may be the text's own words."""
    if _COMMENT_OPEN not in text:
        return text
    kept: list[str] = []
    for place, piece in enumerate(text.split(_FENCE)):
        # Even pieces are outside fences, odd ones inside.
        kept.append(piece if place % 2 else _strip_comments(piece))
    return _FENCE.join(kept)


def _strip_comments(text: str) -> str:
    out: list[str] = []
    start = 0
    while (opening := text.find(_COMMENT_OPEN, start)) >= 0:
        closing = text.find(_COMMENT_CLOSE, opening + len(_COMMENT_OPEN))
        if closing < 0:
            break
        out.append(text[start:opening])
        out.append(" ")
        start = closing + len(_COMMENT_CLOSE)
    out.append(text[start:])
    return "".join(out)


def parse_task(text: str) -> ParsedTask:
    """Extract weighted words and the exact names, files and frames the task mentions, from the task
    without its template's comments and the reporter's environment (version reports, banners)."""
    text = without_environment(without_comments(text))
    words: dict[str, int] = {}
    prose: set[str] = set()
    named_words: set[str] = set()

    def add(word: str, weight: int) -> None:
        lowered = word.lower().strip("_")
        if not lowered or len(lowered) > MAX_WORD_CHARS or lowered in STOPWORDS or lowered.isdigit():
            return
        if len(lowered) == 1:
            return
        words[lowered] = max(words.get(lowered, 0), weight)

    def add_identifier(identifier: str, weight: int) -> None:
        add(whole_word(identifier), weight)
        named_words.add(whole_word(identifier))
        for part in split_identifier(identifier):
            named_words.add(part)
            add(part, SPLIT_PART_WEIGHT if len(split_identifier(identifier)) > 1 else weight)

    # Each kind of frame is read from what the kinds before it left: a JVM frame's bare file name
    # (``Decoder.java``) is no path of its own (its frame says the folders), so neither the generic
    # frames nor the file paths read it again.
    jvm_frames, without_jvm_frames = _taken(_FRAME_JVM, text)
    python_frames, without_python_frames = _taken(_FRAME_PYTHON, without_jvm_frames)
    generic_frames, unframed = _taken(_FRAME_GENERIC, without_python_frames)
    # Innermost first: Python prints the most recent call last; the other formats (Java, Go, Rust,
    # JavaScript, a compiler's "file:line") print the place of the failure first.
    frames = (
        *(
            Frame(_normalise_path(path), int(line), function)
            for path, line, function in reversed(python_frames)
        ),
        *(_jvm_frame(*found) for found in jvm_frames),
        *(Frame(_normalise_path(path), int(line)) for path, line in generic_frames),
    )
    code_text = " ".join([*_CODE_SPAN.findall(text), *_CODE_BLOCK.findall(text)])
    file_paths = _unique(_normalise_path(p) for p in _FILE_PATH.findall(without_jvm_frames))
    dotted = _unique(
        name for name in _DOTTED.findall(text) if not _FILE_PATH.fullmatch(name) and not name[0].isdigit()
    )
    identifiers: list[str] = []
    # Each distinct word once, in the order of its first use: a word seen again adds nothing, and a
    # long task repeats its words thousands of times.
    for word in dict.fromkeys(_IDENTIFIER.findall(text)):
        if _looks_like_identifier(word):
            identifiers.append(word)
            add_identifier(word, IDENTIFIER_WEIGHT)
        else:
            add(word, 1)
            prose.add(word.lower())
    for word in dict.fromkeys(_IDENTIFIER.findall(code_text)):
        identifiers.append(word)
        add_identifier(word, CODE_SPAN_WEIGHT)
    for name in dotted:
        for component in dict.fromkeys(name.split(".")):
            identifiers.append(component)
            add_identifier(component, DOTTED_NAME_WEIGHT)
    for path in file_paths:
        for component in re.split(r"[/.]", path.rsplit(".", 1)[0]):
            add_identifier(component, FILE_PATH_WEIGHT)
    first_line = _TITLE.match(text)
    title = first_line.group(1).rstrip() if first_line else ""
    if len(title) <= MAX_TITLE_CHARS:
        for word in words.keys() & _words_of(title):
            words[word] *= TITLE_FACTOR
    # The strongest first, then in the order the task says them; search weighs them by rarity.
    strongest = dict(sorted(words.items(), key=lambda item: -item[1])[:MAX_PARSED_WORDS])
    # How many times the task says each word outside its stack frames, whose paths repeat the
    # folders of every frame.
    times = _times_said(Counter(_IDENTIFIER.findall(unframed)))
    return ParsedTask(
        words=strongest,
        identifiers=_unique(identifiers)[:MAX_NAMED],
        dotted_names=dotted[:MAX_NAMED],
        file_paths=file_paths[:MAX_NAMED],
        frames=frames[:MAX_NAMED],
        asks_for_tests=_asks_for_tests(text),
        test_paths=_unique(
            path for path in map(_normalise_path, _FILE_PATH.findall(unframed)) if is_test_path(path)
        )[:MAX_NAMED],
        scopes=_title_scopes(title),
        prose=frozenset(word for word in prose if word in strongest and word not in named_words),
        said={word: times[word] for word in strongest},
    )


def _title_scopes(title: str) -> tuple[str, ...]:
    """The scopes a title starts with: ``scope:``, or ``type(scope, …):``; none for a change type."""
    found = _TITLE_SCOPE.match(title)
    if found is None:
        return ()
    named = _SCOPE_BRACES.sub(
        lambda braces: " ".join(
            f"{braces.group(1)}{choice}{braces.group(3)}" for choice in braces.group(2).split(",")
        ),
        found.group("scopes") or found.group("scope"),
    )
    scopes = (scope.lower().strip("-_.") for scope in _SCOPE_SEPARATORS.split(named))
    return _unique(scope for scope in scopes if len(scope) >= 2 and scope not in CHANGE_TYPES)


def _words_of(text: str) -> set[str]:
    """Every form ``parse_task`` may give a word of ``text``: as prose, as a whole name, by its parts."""
    found: set[str] = set()
    for word in _IDENTIFIER.findall(text):
        found.update(_forms(word))
    return found


def _forms(word: str) -> set[str]:
    """The forms ``parse_task`` may give ``word``: as prose, as a whole name, by its parts."""
    return {word.lower().strip("_"), whole_word(word), *split_identifier(word)}


def _times_said(said: Mapping[str, int]) -> Counter[str]:
    """How many times the task says each form of its words (``said``: each word's own count), a form
    counted once for each word it is a form of (``AutoField`` says ``auto``, ``field`` and
    ``autofield`` once each)."""
    times: Counter[str] = Counter()
    for word, count in said.items():
        for form in _forms(word):
            times[form] += count
    return times


def repeat_factor(times: int) -> float:
    """What a word said ``times`` times multiplies its weight by: BM25's saturation of a query's term
    frequency, 1 for a word said once, growing towards ``1 + REPEAT_SATURATION``."""
    return (REPEAT_SATURATION + 1) * times / (REPEAT_SATURATION + times)


def _normalise_path(path: str) -> str:
    return path.replace("\\", "/").lstrip("./")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))
