"""The repository identity a publish is keyed by: every clone of one repository names it alike."""

from __future__ import annotations

import pytest

from smartctx.team.checkout import Checkout, differences_from_commit, normalised_remote


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/example/shop.git",
        "https://github.com/example/shop",
        "https://github.com/example/shop/",
        "https://someone:token@GitHub.com/example/shop.git",
        "ssh://git@github.com:22/example/shop.git",
        "git@github.com:example/shop.git",
        "github.com:example/shop",
    ],
)
def test_every_form_of_a_remote_names_the_same_repository(url: str) -> None:
    assert normalised_remote(url) == "github.com/example/shop"


def test_a_local_remote_is_named_by_its_path() -> None:
    assert normalised_remote("/srv/git/shop.git") == "srv/git/shop"


def test_only_differences_that_reach_the_index_count() -> None:
    checkout = Checkout(
        commit="c" * 40,
        modified=("app/pricing.py", "README.md"),
        deleted=("app/old.py",),
        untracked=("app/draft.py", "notes.txt"),
    )

    differences = differences_from_commit(checkout, {"app/pricing.py", "app/draft.py", "app/models.py"})

    assert differences == [
        "app/draft.py (not committed)",
        "app/old.py (deleted)",
        "app/pricing.py (modified)",
    ]
