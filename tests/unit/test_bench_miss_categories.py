"""The reasons ``bench/quality/miss_categories.py`` gives for a task's gold functions missing Acc@10."""

from __future__ import annotations

from typing import Any

from bench.quality.miss_categories import reasons, study, without_module


def candidate(kind: str, start: int, end: int) -> dict[str, Any]:
    return {"kind": kind, "lines": [start, end]}


RANKED = {
    "a.rs::Opts": candidate("struct", 1, 400),
    "a.rs::run": candidate("function", 401, 420),
    "a.rs::parse": candidate("function", 421, 430),
}


def test_each_gold_function_outside_the_first_ten_gets_its_reason() -> None:
    gold = ["a.rs::<module>", "a.rs::Opts", "a.rs::run", "a.rs::parse", "a.rs::gone"]
    ranks = [None, 12, 15, None, None]
    assert reasons(ranks, gold, RANKED) == {
        "module",
        "long container",
        "packed late",
        "candidate",
        "no candidate",
    }


def test_gold_within_the_first_ten_has_no_reason() -> None:
    assert reasons([1, 10], ["a.rs::run", "a.rs::parse"], RANKED) == set()


def test_module_gold_alone_explains_a_miss_and_is_left_out_without_module() -> None:
    replay = {
        "instances": [
            {"instance_id": "t1", "results": {"smartctx@8000": {"function_ranks": [None, 1]}}},
            {"instance_id": "t2", "results": {"smartctx@8000": {"function_ranks": [None]}}},
        ]
    }
    features = {
        "t1": {"goldFunctions": ["a.rs::<module>", "a.rs::run"], "definitions": []},
        "t2": {"goldFunctions": ["a.rs::<module>"], "definitions": []},
    }
    tasks, misses, involved, alone = study(replay, features)
    assert (tasks, misses, involved["module"], alone["module"]) == (2, 2, 2, 2)
    # Without <module> the first task counts and the second has no gold function left.
    assert without_module(replay, features) == (1, 1)
