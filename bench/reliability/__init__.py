"""Reliability and safety: fuzzed frames and arguments, hostile files, soaks, secret redaction."""
