"""The lexical index: BM25 over every definition and over every whole file, in tantivy.

It is derived data. ``search_words`` in SQLite holds every row's words (rows.py); this index is built
from them and updated after each batch, never from a parse. Each of its two tantivy indexes carries,
in one marker document committed with every change, the index generation (``meta``
``search_generation``) it holds; when that is not SQLite's (a process killed between the two
commits, an index file copied without this folder), the writer builds it again from
``search_words``.

Scoring follows FTS5's ``bm25()``, which it replaces (architecture.md, *Measured on these machines*,
``bench/latency/search_engines.py``): one field holds each column's words repeated by the column's weight,
so a term's frequency there is the weighted sum of its counts per column under a single saturation,
as FTS5 computed it; only the length norm differs (of the weighted text here, of the plain text in
FTS5). A query is a disjunction of term queries boosted by each term's weight, which tantivy answers
top-k with block-max WAND: on django's SWE-bench Lite tasks the lexical calls of a request went from
p95 165 ms to 2 ms.

Tantivy counts a deleted document in its statistics (document frequency, average length) until a
merge drops it, and its Python binding cannot ask for one: after updates the scores drift from those
of a fresh build (re-indexing 1 % of django's files left 99.9 % of each top 50 in place, but no
answer identical). The writer (writer.py) therefore builds the index again instead of updating
it when it is small or once the deleted rows still counted reach ``REBUILD_DELETED_SHARE`` of its
rows, and the writer's compaction does so whenever it holds any: a compacted index answers exactly
as a fresh one. Those rows are measured, not tallied: every row carries the term ``marker:0``, whose
document frequency counts the rows tantivy still counts, deleted or not, so it less the live rows
is the drift. A tally of removed rows would only grow, while tantivy drops a segment once all of
its documents are deleted and merges the rest in its own threads: typing in an open buffer
replaces the same file's rows at every update, and a tally rebuilt django's index (1.2 s) every
dozen updates of one large file, where the rows still counted stay about one file's worth.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar

import tantivy

from smartctx.store.rows import NodeWords, unpack_search_words

# The folder beside the index file (``index-v1.sqlite.lexical-v2``): its version is part of its name,
# like the index file's, so another layout is built next to it rather than misread (and the older
# one removed). Version 2 marks every row with ``marker:0``, which version 1 lacked.
LEXICAL_VERSION = 2
# The column weights FTS5's bm25() was given, now the number of times each column's words are
# repeated: a definition's name counts ten times its body, its qualified name four, and so on.
SYMBOL_COLUMN_REPEATS = (10, 4, 2, 1, 1, 2)  # name, qualified name, signature, doc, body, path
FILE_COLUMN_REPEATS = (1, 3)  # body, path
# Below this many rows a build costs less than a tenth of a second, so every change builds the index
# again and it always answers exactly as a fresh one would.
REBUILD_BELOW_ROWS = 5_000
# Above it, changes are applied in place until the deleted rows still counted reach this share.
REBUILD_DELETED_SHARE = 0.10
# A build reads search_words and adds their rows to tantivy this many files at a time.
BUILD_BATCH_FILES = 1_000
# Memory for tantivy's writer: enough for django's 43k rows in one segment, released at each commit.
WRITER_HEAP_BYTES = 64 * 1024 * 1024
# A top-k is asked for this many more hits than wanted, so that ties at the cut can be ordered by id
# (as FTS5's ``ORDER BY rank, rowid`` did) rather than by where tantivy stored them.
TIE_MARGIN = 32
# How long a reader waits for the lexical index to reach its snapshot's generation (a writer between
# its two commits) before it answers from the one it has.
GENERATION_WAIT_S = 0.2
_GENERATION_POLL_S = 0.005

_SYMBOLS = "symbols"
_FILES = "files"
_TOKENIZER = "words"
# The ``marker`` term of the one document that records an index's generation, and of every row.
_MARKER = 1
_ROW = 0


class LexicalIndexMissingError(Exception):
    """The lexical index folder is missing or unreadable; the writer builds it on open."""


class LexicalIndexBusyError(Exception):
    """Another writer (another process, or another handle in this one) holds tantivy's lock on the
    lexical index; only the process holding the index's writer lock may write it (live/sharing.py)."""


@dataclass(frozen=True, slots=True)
class LexicalHit:
    row_id: int
    score: float


def lexical_dir(index_path: Path) -> Path:
    return index_path.with_name(f"{index_path.name}.lexical-v{LEXICAL_VERSION}")


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=False, indexed=False, fast=True)
    builder.add_integer_field("file", stored=False, indexed=True)
    builder.add_integer_field("marker", stored=False, indexed=True)
    builder.add_text_field("words", stored=False, tokenizer_name=_TOKENIZER, index_option="freq")
    return builder.build()


_SCHEMA = _schema()


def _register(index: tantivy.Index) -> tantivy.Index:
    """Words are stored lowercase and already split (core/identifiers.py); the tokenizer folds case and
    accents as FTS5's ``unicode61 remove_diacritics 2`` did."""
    index.register_tokenizer(
        _TOKENIZER,
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build(),
    )
    # Every searcher is taken after an explicit reload(). Tantivy's own reload on commit watches
    # meta.json from a thread of its own and takes a lock file in the folder whenever it sees a
    # change, even while a finished overlay's folder is being removed (which then fails).
    index.config_reader(reload_policy="Manual")
    return index


def _weighted(columns: Sequence[str], repeats: Sequence[int]) -> str:
    return " ".join(" ".join([words] * times) for words, times in zip(columns, repeats, strict=True) if words)


def symbol_text(words: Sequence[str], path_words: str) -> str:
    return _weighted((*words, path_words), SYMBOL_COLUMN_REPEATS)


def file_text(nodes: Sequence[Sequence[str]], path_words: str) -> str:
    return _weighted((" ".join(words[4] for words in nodes), path_words), FILE_COLUMN_REPEATS)


@dataclass
class LexicalChanges:
    """What one batch changed: files whose rows go, then rows that come (in that order, so a file
    re-indexed in the batch loses its old rows and keeps its new ones)."""

    removed_files: set[int] = field(default_factory=set)
    removed_rows: int = 0
    symbols: list[tuple[int, int, str]] = field(default_factory=list)  # (node id, file id, text)
    files: list[tuple[int, str]] = field(default_factory=list)  # (file id, text)

    def __bool__(self) -> bool:
        return bool(self.removed_files or self.symbols or self.files)


class LexicalReader:
    """Top-k BM25 and document frequencies over one searcher of each tantivy index."""

    def __init__(self, symbols: tantivy.Searcher, files: tantivy.Searcher) -> None:
        self._symbols = symbols
        self._files = files

    def search_symbols(self, weighted_terms: Mapping[str, float], limit: int) -> list[LexicalHit]:
        return _top(self._symbols, weighted_terms, limit)

    def search_files(self, weighted_terms: Mapping[str, float], limit: int) -> list[LexicalHit]:
        return _top(self._files, weighted_terms, limit)

    def document_count(self, term: str) -> int:
        """Definitions holding ``term`` in any column."""
        return int(self._symbols.doc_freq("words", term))


def _top(searcher: tantivy.Searcher, weighted_terms: Mapping[str, float], limit: int) -> list[LexicalHit]:
    """The ``limit`` best rows, best first, ties by id; every tie at the cut is fetched before cutting."""
    if limit <= 0 or not weighted_terms:
        return []
    query = tantivy.Query.boolean_query(
        [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(_SCHEMA, "words", term), float(weight)),
            )
            for term, weight in sorted(weighted_terms.items())
        ]
    )
    wanted = limit + TIE_MARGIN
    while True:
        hits = searcher.search(query, limit=wanted, count=False).hits
        ids = searcher.fast_field_values("id", [address for _, address in hits])
        ranked = sorted((-score, _row_id(row_id)) for (score, _), row_id in zip(hits, ids, strict=True))
        # Fewer hits than asked for: that is every match. Otherwise the last one must score below
        # the one at the cut, or a tie there may reach past what was fetched.
        if len(hits) < wanted or len(ranked) <= limit or ranked[-1][0] > ranked[limit - 1][0]:
            return [LexicalHit(row_id, -negated) for negated, row_id in ranked[:limit]]
        wanted *= 2


def _row_id(value: int | float | None) -> int:
    """An ``id`` fast-field value: every document of the index has one, and it is an integer."""
    if not isinstance(value, int):
        raise LexicalIndexMissingError(f"the lexical index holds a document without an id ({value!r})")
    return value


@dataclass(frozen=True, slots=True)
class LexicalState:
    """The generation both indexes hold, as their marker documents say (None if they disagree or
    have none), the definitions the index holds, and how many deleted rows (definitions, files)
    their statistics still count."""

    generation: int | None
    rows: int
    deleted_rows: int
    deleted_files: int

    def needs_rebuild(self, changes: LexicalChanges) -> bool:
        """Whether a batch is better applied as a rebuild: the index is small enough that a build
        costs little, or the deleted rows its statistics count would pass
        ``REBUILD_DELETED_SHARE`` of it."""
        if self.rows < REBUILD_BELOW_ROWS:
            return True
        return self.deleted_rows + changes.removed_rows > REBUILD_DELETED_SHARE * self.rows


class LexicalIndex:
    """The two tantivy indexes beside one SQLite index file, for one process.

    Readers share the opened indexes (each snapshot takes a searcher of the latest commit); the
    writer is the process holding SQLite's write lock. It opens tantivy's writers at its first batch
    and keeps them until it stops writing (:meth:`release`): tantivy merges segments in threads of
    its writer, which a writer dropped after each batch would kill, so a batch would have to wait
    for them (a merge took 0.2 s of an update's p95 on django).
    """

    _opened: ClassVar[dict[Path, LexicalIndex]] = {}
    _opened_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._symbols = _register(tantivy.Index.open(str(folder / _SYMBOLS)))
        self._files = _register(tantivy.Index.open(str(folder / _FILES)))
        # Guarded by _writing: this process's writers of the files and the symbols index while it
        # writes them (each holds tantivy's lock on its folder), None otherwise.
        self._writing = threading.Lock()
        self._writers: tuple[tantivy.IndexWriter, tantivy.IndexWriter] | None = None
        # Commits the files index while the caller commits the symbols index (see :meth:`apply`).
        self._committer: ThreadPoolExecutor | None = None

    @classmethod
    def for_index(cls, index_path: Path) -> LexicalIndex:
        """The process's handle on the lexical index of ``index_path``; raises
        LexicalIndexMissingError when there is none to open."""
        folder = lexical_dir(index_path)
        with cls._opened_lock:
            found = cls._opened.get(folder)
            if found is None:
                try:
                    found = cls(folder)
                except ValueError as error:
                    raise LexicalIndexMissingError(f"no lexical index in {folder}: {error}") from error
                cls._opened[folder] = found
            return found

    @classmethod
    def forget(cls, index_path: Path) -> None:
        """Drop the process's handle (and its writers) on the lexical index of ``index_path``."""
        with cls._opened_lock:
            found = cls._opened.pop(lexical_dir(index_path), None)
        if found is not None:
            found.release()

    @classmethod
    def stop_writing(cls, index_path: Path) -> None:
        """This process no longer writes the index of ``index_path``: release its lexical writers."""
        with cls._opened_lock:
            found = cls._opened.get(lexical_dir(index_path))
        if found is not None:
            found.release()

    def reader(self, generation: int) -> LexicalReader:
        """Searchers of the latest commits, waiting briefly while either holds an older generation
        than ``generation`` (a writer between its SQLite and its tantivy commit). A newer one is
        taken at once: tantivy keeps no older commit to go back to, and waiting would not bring one."""
        deadline = time.monotonic() + GENERATION_WAIT_S
        while True:
            self._symbols.reload()
            self._files.reload()
            symbols, files = self._symbols.searcher(), self._files.searcher()
            held = (_marker(symbols), _marker(files))
            if (
                all(found is not None and found >= generation for found in held)
                or time.monotonic() >= deadline
            ):
                return LexicalReader(symbols, files)
            time.sleep(_GENERATION_POLL_S)

    def state(self) -> LexicalState:
        self._symbols.reload()
        self._files.reload()
        symbols, files = self._symbols.searcher(), self._files.searcher()
        generation, file_generation = _marker(symbols), _marker(files)
        return LexicalState(
            generation if generation == file_generation else None,
            _live_rows(symbols, generation),
            _deleted_counted(symbols, generation),
            _deleted_counted(files, file_generation),
        )

    def apply(self, changes: LexicalChanges, generation: int) -> None:
        """Commit one batch's changes to both indexes. The generation marker goes into each commit,
        so a reader sees each index at one generation or the other, never between."""
        with self._writing:
            self._side_by_side(
                partial(_commit, changes=changes, added=_file_rows(changes), generation=generation),
                partial(_commit, changes=changes, added=changes.symbols, generation=generation),
            )

    def replace_all(self, batches: Iterable[LexicalChanges], generation: int) -> None:
        """Replace both indexes' rows with the rows ``batches`` add, in one commit each: the batches
        are added one after the other, so only one of them and tantivy's writer heap are held in
        memory (every row of the 104k-file monorepo at once took 2.4 GB)."""
        with self._writing:
            self._side_by_side(_delete_all, _delete_all)
            for changes in batches:
                self._side_by_side(
                    partial(_add, added=_file_rows(changes)), partial(_add, added=changes.symbols)
                )
            seal = partial(_seal, generation=generation)
            self._side_by_side(seal, seal)

    def _side_by_side(
        self,
        files_work: Callable[[tantivy.IndexWriter], None],
        symbols_work: Callable[[tantivy.IndexWriter], None],
    ) -> None:
        """Run ``files_work`` on the files index's writer on the committer thread while
        ``symbols_work`` runs on the symbols index's writer on this one; both are done when this
        returns. A commit mostly waits for the disk, and the two waits overlap (on django, side by
        side, p50 72 ms in parallel against 229 ms one after the other on a loaded machine). The
        caller holds ``_writing``."""
        if self._writers is None:
            self._writers = (self._writer(self._files), self._writer(self._symbols))
        if self._committer is None:
            self._committer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smartctx-lexical")
        files_writer, symbols_writer = self._writers
        try:
            files = self._committer.submit(files_work, files_writer)
            try:
                symbols_work(symbols_writer)
            finally:
                # An error of the files' work is raised here (chained to the symbols' work's, if
                # that failed too).
                files.result()
        except BaseException:
            # A writer whose work failed may hold half a batch: the next batch opens new ones, and
            # finds the generation behind SQLite's, so it builds the index again.
            self._writers = None
            raise

    @staticmethod
    def _writer(index: tantivy.Index) -> tantivy.IndexWriter:
        try:
            return index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        except ValueError as error:
            raise LexicalIndexBusyError(f"another writer holds the lexical index: {error}") from error

    def release(self) -> None:
        """Stop writing: let the merges under way finish, then close the writers, which frees
        tantivy's locks for the next process to write. Nothing when this process holds none."""
        with self._writing:
            writers, self._writers = self._writers, None
            committer, self._committer = self._committer, None
            if committer is not None:
                committer.shutdown()
            for writer in writers or ():
                writer.wait_merging_threads()


def _file_rows(changes: LexicalChanges) -> list[tuple[int, int, str]]:
    """The files index's rows of a batch: a file's row is its own file's."""
    return [(file_id, file_id, text) for file_id, text in changes.files]


def _commit(
    writer: tantivy.IndexWriter,
    changes: LexicalChanges,
    added: Sequence[tuple[int, int, str]],
    generation: int,
) -> None:
    """One index's part of a batch: the rows of removed files go, ``added`` and the marker of
    ``generation`` come, in one commit."""
    for file_id in sorted(changes.removed_files):
        writer.delete_documents_by_term("file", file_id)
    writer.delete_documents_by_term("marker", _MARKER)
    _add(writer, added)
    _seal(writer, generation)


def _delete_all(writer: tantivy.IndexWriter) -> None:
    writer.delete_all_documents()


def _add(writer: tantivy.IndexWriter, added: Sequence[tuple[int, int, str]]) -> None:
    for row_id, file_id, text in added:
        writer.add_document(tantivy.Document(id=row_id, file=file_id, marker=_ROW, words=text))


def _seal(writer: tantivy.IndexWriter, generation: int) -> None:
    """Add the marker of ``generation`` and commit what the writer holds."""
    writer.add_document(tantivy.Document(id=generation, marker=_MARKER))
    writer.commit()


def _marker(searcher: tantivy.Searcher) -> int | None:
    """The generation an index's marker document records, None without one."""
    hits = searcher.search(tantivy.Query.term_query(_SCHEMA, "marker", _MARKER), limit=1, count=False).hits
    if not hits:
        return None
    (generation,) = searcher.fast_field_values("id", [address for _, address in hits])
    return None if generation is None else int(generation)


def _live_rows(searcher: tantivy.Searcher, generation: int | None) -> int:
    """Every live document but the marker (there is one once a generation was committed)."""
    return max(0, int(searcher.num_docs) - (generation is not None))


def _deleted_counted(searcher: tantivy.Searcher, generation: int | None) -> int:
    """Deleted rows the searcher's statistics still count: the rows tantivy counts (the document
    frequency of ``marker:0`` includes deleted documents until a merge drops them) less the live
    ones."""
    return max(0, int(searcher.doc_freq("marker", _ROW)) - _live_rows(searcher, generation))


def stored_rows(db: sqlite3.Connection) -> Iterator[tuple[int, array[int], str, list[NodeWords]]]:
    """Each file's search words as stored: (file id, its nodes' ids, its path's words, each node's
    five search columns), by file id."""
    for file_id, packed_ids, packed_words in db.execute(
        "SELECT file_id, node_ids, words FROM search_words ORDER BY file_id"
    ):
        node_ids = array("q")
        node_ids.frombytes(packed_ids)
        path_words, nodes = unpack_search_words(packed_words)
        yield file_id, node_ids, path_words, nodes


def stored_batches(db: sqlite3.Connection) -> Iterator[LexicalChanges]:
    """Every row of ``search_words`` that ``db`` sees, as changes that add them, ``BUILD_BATCH_FILES``
    files at a time."""
    changes = LexicalChanges()
    for file_id, node_ids, path_words, nodes in stored_rows(db):
        changes.files.append((file_id, file_text(nodes, path_words)))
        changes.symbols.extend(
            (node_id, file_id, symbol_text(words, path_words))
            for node_id, words in zip(node_ids, nodes, strict=True)
        )
        if len(changes.files) >= BUILD_BATCH_FILES:
            yield changes
            changes = LexicalChanges()
    if changes:
        yield changes


def build(db: sqlite3.Connection, index_path: Path, generation_key: str) -> None:
    """Build the lexical index of ``index_path`` from the search_words rows ``db`` sees, at the
    generation its meta row ``generation_key`` holds (0 without one), in one read transaction."""
    db.execute("BEGIN")
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (generation_key,)).fetchone()
        generation = int(row[0]) if row is not None else 0
        open_or_create(index_path).replace_all(stored_batches(db), generation)
    finally:
        db.execute("COMMIT")


def open_or_create(index_path: Path) -> LexicalIndex:
    """The lexical index of ``index_path``, created empty (no generation) when it is missing or
    unreadable: it is rebuilt from SQLite, never repaired."""
    try:
        return LexicalIndex.for_index(index_path)
    except LexicalIndexMissingError:
        remove(index_path)
    for version in range(1, LEXICAL_VERSION):
        # An older layout's folder is left by an older smartctx; this one is built from SQLite.
        shutil.rmtree(index_path.with_name(f"{index_path.name}.lexical-v{version}"), ignore_errors=True)
    folder = lexical_dir(index_path)
    for name in (_SYMBOLS, _FILES):
        (folder / name).mkdir(parents=True)
        _register(tantivy.Index(_SCHEMA, path=str(folder / name)))
    return LexicalIndex.for_index(index_path)


def remove(index_path: Path) -> None:
    """Delete the lexical index of ``index_path`` (a new index file starts without one)."""
    LexicalIndex.forget(index_path)
    shutil.rmtree(lexical_dir(index_path), ignore_errors=True)


def folder_bytes(index_path: Path) -> int:
    folder = lexical_dir(index_path)
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) if folder.exists() else 0
