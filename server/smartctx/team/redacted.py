"""Publishing is an exit: everything textual it writes passes the secret redaction (architecture.md,
*Safety*), as every other exit's ``redact_tree``.

The text columns (paths, names, qualified names, signatures, docs, reference names and keys) are
redacted with ``redact_all``, many records at a time. The search words need nothing more: they
were made without the secrets' words when the files were indexed (store/rows.py), and an index of
older words is never exported (``IndexExport.check_words``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from smartctx.secrets.redaction import redact_all

# Records redacted together: redact_all tries most rules on all their strings in one scan.
RECORDS_PER_BATCH = 2_000
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
