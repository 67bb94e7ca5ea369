"""Publishing is an exit: everything textual it writes passes the secret redaction (architecture.md,
*Safety*), as every other exit's ``redact_tree``.

The text columns (paths, names, qualified names, signatures, docs, reference names and keys) are
redacted with ``redact_all``, many records at a time. The postings need more: they are words, and a
secret in a string literal or a docstring would have become terms (the pieces of a key, a password
from a URL) that no scan of a lone word recognises. So each search column is made again from the
text it came from with the secrets replaced: the name, qualified name, signature and doc as stored,
the path, and for the body the lines the definition owns, read again from the checkout (the commit
that was indexed, which ``publisher.py`` and the content hashes check). The words of a text whose
secrets were replaced by ``[REDACTED]`` are the words of the text with those secrets cut out, plus
one ``redacted`` per replacement (the brackets keep the marker a word of its own); those markers are
dropped, so a column keeps every term and frequency it had except the secret's. A column whose text
holds no secret keeps its stored words, which are the words of that same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path

from smartctx.core.files import content_hash, line_offsets, own_texts
from smartctx.core.identifiers import search_words
from smartctx.secrets.redaction import redact_all
from smartctx.secrets.rules import REDACTED
from smartctx.store.export import FileRecord, IndexExport, NodeRecord, SearchWordsRecord
from smartctx.store.rows import NodeWords
from smartctx.team import PublishError

# Records redacted together: redact_all tries most rules on all their strings in one scan.
RECORDS_PER_BATCH = 2_000
# Files whose texts are redacted together for the search words.
FILES_PER_BATCH = 64
# The one word the replacement marker adds to a text's search words.
MARKER_WORD = search_words(REDACTED)
# The text columns of each table that come from the source, and so may hold a secret.
FILE_TEXT = ("path",)
NODE_TEXT = ("name", "qualified_name", "signature", "doc")
REF_TEXT = ("name", "key")
FOLDED_TEXT = ("name",)


def redacted_rows(
    rows: Iterable[Sequence[object]], columns: Sequence[str], texts: tuple[str, ...]
) -> Iterator[tuple[object, ...]]:
    """``rows`` of ``columns`` with the secrets in the string columns ``texts`` replaced."""
    positions = {columns.index(name) for name in texts}
    pending = iter(rows)
    while batch := list(islice(pending, RECORDS_PER_BATCH)):
        answers = redact_all(str(row[position]) for row in batch for position in positions)
        for row in batch:
            yield tuple(
                answers[str(value)][0] if position in positions else value
                for position, value in enumerate(row)
            )


class RedactedSearchWords:
    """The export's search words with the secrets cut out of every column, for the two postings
    tables. The first pass reads and redacts every file; later passes reuse the few files it
    changed."""

    def __init__(self, export: IndexExport, root: Path) -> None:
        self._export = export
        self._root = root
        self._changed: dict[int, SearchWordsRecord] | None = None

    def records(self) -> Iterator[SearchWordsRecord]:
        if self._changed is not None:
            changed = self._changed
            for record in self._export.search_words():
                yield changed.get(record.file_id, record)
            return
        files = {record.file_id: record for record in self._export.files()}
        nodes = {record.node_id: record for record in self._export.nodes()}
        found: dict[int, SearchWordsRecord] = {}
        pending = self._export.search_words()
        while batch := list(islice(pending, FILES_PER_BATCH)):
            for record, redacted in zip(batch, self._redacted(batch, files, nodes), strict=True):
                if redacted != record:
                    found[record.file_id] = redacted
                yield redacted
        self._changed = found

    def _redacted(
        self,
        batch: list[SearchWordsRecord],
        files: Mapping[int, FileRecord],
        nodes: Mapping[int, NodeRecord],
    ) -> list[SearchWordsRecord]:
        # Per file: its path, then each node's five source texts in the order of its search columns.
        sources: list[tuple[str, list[NodeWords]]] = []
        for record in batch:
            file = files[record.file_id]
            definitions = [nodes[node_id] for node_id in record.node_ids]
            bodies = self._own_texts(file, definitions)
            sources.append(
                (
                    file.path,
                    [
                        (node.name, node.qualified_name, node.signature, node.doc, body)
                        for node, body in zip(definitions, bodies, strict=True)
                    ],
                )
            )
        answers = redact_all(
            text for path, texts in sources for text in (path, *(text for node in texts for text in node))
        )

        def words(stored: str, source: str) -> str:
            redacted, replaced = answers[source]
            if not replaced:
                return stored
            kept = search_words(redacted).split()
            for _ in range(replaced):
                kept.remove(MARKER_WORD)
            return " ".join(kept)

        result = []
        for record, (path, texts) in zip(batch, sources, strict=True):
            node_words = tuple(
                (
                    words(stored[0], source[0]),
                    words(stored[1], source[1]),
                    words(stored[2], source[2]),
                    words(stored[3], source[3]),
                    words(stored[4], source[4]),
                )
                for stored, source in zip(record.nodes, texts, strict=True)
            )
            result.append(record._replace(path_words=words(record.path_words, path), nodes=node_words))
        return result

    def _own_texts(self, file: FileRecord, definitions: list[NodeRecord]) -> tuple[str, ...]:
        """The lines each definition owns, as they were when indexed: its body words' text."""
        try:
            data = (self._root / file.path).read_bytes()
        except OSError as error:
            raise PublishError(
                f"cannot read {file.path} again to redact its search words ({error}); publish again"
            ) from None
        if content_hash(data) != file.content_hash:
            raise PublishError(
                f"{file.path} changed after it was indexed, so its search words cannot be redacted"
                " from it; publish again once the checkout is settled"
            )
        return own_texts(data, line_offsets(data), [(node.start_line, node.end_line) for node in definitions])
