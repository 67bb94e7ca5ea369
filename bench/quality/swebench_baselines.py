"""The two baselines smartctx is measured against on SWE-bench Lite.

(a) BM25 over whole files: every indexed file is a document, the problem statement is the query, and
    files are packed whole in rank order into the budget, counted with the real tokenizer.
(b) The seed recipe taken literally: the index's FTS5 BM25 top 100 symbols, ranked by BM25 alone,
    the first five packed as bodies read from the files and the next 25 as signature + doc, the
    budget counted as characters / 4, and packing stops at the first item that does not fit.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.quality.swebench_scoring import MODULE_NAME, PackItem
from smartctx.core.identifiers import search_words
from smartctx.core.model import SymbolKind
from smartctx.store.snapshot import IndexSnapshot

TokenCount = Callable[[str], int]

# Okapi BM25 constants, the usual defaults (as in Lucene and bm25s).
BM25_K1 = 1.2
BM25_B = 0.75

# Baseline (a) stops looking for a file that still fits after this many ranked files, or once less
# than this many tokens are left: the tail of the ranking never changes a hit, only the run time.
WHOLE_FILE_MAX_TRIED = 200
WHOLE_FILE_MIN_LEFT_TOKENS = 32

# The seed recipe's defaults.
SEED_CANDIDATES = 100
SEED_MAX_BODIES = 5
SEED_MAX_SUMMARIES = 25
SEED_CHARS_PER_TOKEN = 4


def terms(text: str) -> list[str]:
    """Search terms of free text or code, split the way the index splits identifiers."""
    return search_words(text).split()


@dataclass(frozen=True)
class TextPack:
    """A baseline's pack: what the scorer sees, the text an LLM would get, and its real token count."""

    items: tuple[PackItem, ...]
    text: str
    tokens: int


@dataclass(frozen=True)
class _Document:
    length: int
    term_counts: dict[str, int]
    line_count: int


class WholeFileBaseline:
    """Baseline (a). Call ``refresh`` after each checkout; a file's terms and token count are cached
    by its content, so a branch switch only tokenises the files it changed."""

    def __init__(self, count: TokenCount) -> None:
        self._count = count
        self._root = Path()
        self._files: dict[str, tuple[str, _Document]] = {}
        self._by_digest: dict[str, _Document] = {}
        self._block_tokens: dict[tuple[str, str], int] = {}

    def refresh(self, root: Path, paths: Iterable[str]) -> None:
        """Read every file of the corpus; forget documents no longer in it."""
        files: dict[str, tuple[str, _Document]] = {}
        by_digest: dict[str, _Document] = {}
        for path in paths:
            try:
                data = (root / path).read_bytes()
            except OSError:
                continue
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            document = by_digest.get(digest) or self._by_digest.get(digest)
            if document is None:
                text = data.decode("utf-8", errors="replace")
                counts = Counter(terms(text))
                document = _Document(sum(counts.values()), dict(counts), text.count("\n") + 1)
            by_digest[digest] = document
            files[path] = (digest, document)
        self._root = root
        self._files = files
        self._by_digest = by_digest
        self._block_tokens = {
            (path, digest): tokens
            for (path, digest), tokens in self._block_tokens.items()
            if path in files and files[path][0] == digest
        }

    def rank(self, query: str) -> list[str]:
        """Every file of the corpus, best BM25 score first (ties by path)."""
        query_terms = sorted(set(terms(query)))
        documents = sorted(self._files.items())
        if not documents:
            return []
        average_length = sum(document.length for _, (_, document) in documents) / len(documents) or 1.0
        frequencies = {term: 0 for term in query_terms}
        for _, (_, document) in documents:
            for term in query_terms:
                if term in document.term_counts:
                    frequencies[term] += 1
        weights = {
            term: math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
            for term, df in frequencies.items()
            if df
        }
        scores: list[tuple[float, str]] = []
        for path, (_, document) in documents:
            norm = BM25_K1 * (1 - BM25_B + BM25_B * document.length / average_length)
            score = 0.0
            for term, weight in weights.items():
                tf = document.term_counts.get(term)
                if tf:
                    score += weight * tf * (BM25_K1 + 1) / (tf + norm)
            scores.append((-score, path))
        scores.sort()
        return [path for _, path in scores]

    def pack(self, ranked: Sequence[str], budget_tokens: int) -> TextPack:
        """Whole files in rank order; a file that does not fit is skipped and the next one tried."""
        blocks: list[str] = []
        items: list[PackItem] = []
        used = 0
        for path in ranked[:WHOLE_FILE_MAX_TRIED]:
            if budget_tokens - used < WHOLE_FILE_MIN_LEFT_TOKENS:
                break
            digest, document = self._files[path]
            block = f"### {path}\n{(self._root / path).read_text(encoding='utf-8', errors='replace')}\n"
            cost = self._block_tokens.get((path, digest))
            if cost is None:
                cost = self._block_tokens[(path, digest)] = self._count(block)
            if used + cost > budget_tokens:
                continue
            used += cost
            blocks.append(block)
            items.append(PackItem(path, MODULE_NAME, 1, document.line_count, body=True, whole_file=True))
        text = "".join(blocks)
        return TextPack(tuple(items), text, self._count(text))


def seed_recipe(
    task: str, snapshot: IndexSnapshot, root: Path, budget_tokens: int, count: TokenCount
) -> TextPack:
    """Baseline (b), the seed algorithm with its defects left in."""
    hits = sorted(snapshot.search(dict.fromkeys(terms(task), 1), SEED_CANDIDATES), key=lambda hit: -hit.bm25)
    nodes = {node.id: node for node in snapshot.nodes(hit.node_id for hit in hits)}
    file_lines: dict[str, list[str]] = {}
    parts: list[str] = []
    items: list[PackItem] = []
    used = 0
    for position, hit in enumerate(hits[: SEED_MAX_BODIES + SEED_MAX_SUMMARIES]):
        node = nodes[hit.node_id]
        body = position < SEED_MAX_BODIES
        if body:
            if node.path not in file_lines:
                file_lines[node.path] = (
                    (root / node.path).read_text(encoding="utf-8", errors="replace").splitlines()
                )
            text = "\n".join(file_lines[node.path][node.start_line - 1 : node.end_line])
        else:
            text = "\n".join(part for part in (node.signature, node.doc) if part)
        cost = len(text) // SEED_CHARS_PER_TOKEN
        if used + cost > budget_tokens:
            break
        used += cost
        parts.append(text)
        name = MODULE_NAME if node.kind is SymbolKind.MODULE else node.qualified_name
        items.append(PackItem(node.path, name, node.start_line, node.end_line, body=body))
    text = "\n\n".join(parts)
    return TextPack(tuple(items), text, count(text))
