"""A team's base index in PostgreSQL: one commit's index published once, for every editor to start from.

``smartctx index --publish URL`` copies the local index of the checked-out commit into PostgreSQL
(publish.py), keyed by repository and commit, with no source text: editors read bodies from their
own checkout, and every text and search term it writes is redacted first (redacted.py). This
package reads a local index through ``store.export``, git through ``history.git`` and the
checkout's files only to redact their search words; it never parses, and it is the only code that
speaks to PostgreSQL.
"""


class PublishError(Exception):
    """A publish cannot go ahead as asked (the checkout, the index or the database); the message says
    why and what to do. Defined here, beside no driver import, so a caller can catch it without
    loading PostgreSQL's."""
