"""The secret scanner: what counts as a secret (``rules``), the Hyperscan prefilter and its cache on
disk (``prefilter``), where secrets are in a text (``scan``), and their replacement in values,
message trees (``redaction``) and log records (``log_format``).

Every exit of the process passes :func:`smartctx.secrets.redaction.redact_tree` (architecture.md,
*Safety*); this package depends on ``smartctx.core`` alone.
"""
