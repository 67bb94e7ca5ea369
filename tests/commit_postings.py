"""A reader's answer about past commits as plain lists, to compare readers by (bench/ never imports
this module, so benchmarks still run versions from before the window)."""

from __future__ import annotations

from smartctx.store.past_commits import CommitPostings


def commit_postings(found: CommitPostings) -> tuple[dict[str, tuple[list[int], list[int]]], list[int]]:
    """Each word's commits and counts, and every commit's word count."""
    words = {word: (ids.tolist(), counts.tolist()) for word, (ids, counts) in found.postings.items()}
    return words, found.lengths.tolist()
