"""The ranking model's file and the signals it weighs: what the shipped weights name exists, a
malformed file is refused with a clear error, and the name signals cover what a reader expects."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from smartctx.retrieval.files import FILE_SIGNALS
from smartctx.retrieval.name_match import TaskNames, file_name, folder_name
from smartctx.retrieval.query import parse_task
from smartctx.retrieval.rank_model import MODEL_FILE, LinearWeights, RankModel, shipped_model
from smartctx.retrieval.score import DEFINITION_SIGNALS


def test_the_shipped_model_weighs_only_signals_the_ranking_computes() -> None:
    model = shipped_model()
    assert set(model.definitions.weights) <= set(DEFINITION_SIGNALS)
    assert set(model.files.weights) <= set(FILE_SIGNALS)
    # The lexical evidence must count for something, or no task could find anything.
    assert model.definitions.weight("bm25") > 0
    assert model.files.weight("text") > 0


def test_the_shipped_model_says_where_it_comes_from() -> None:
    data = json.loads(resources.files("smartctx.retrieval").joinpath(MODEL_FILE).read_text(encoding="utf-8"))
    assert data["provenance"]["source"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"format": 99, "definitions": {}, "files": {}}, "format 99"),
        ({"format": 1, "definitions": {"bm25": "high"}, "files": {}}, "'definitions'"),
        ({"format": 1, "definitions": {}}, "'files'"),
    ],
)
def test_a_malformed_model_is_refused_with_what_is_wrong(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RankModel.from_json(data)


def test_parts_are_weights_times_signals_and_leave_out_what_adds_nothing() -> None:
    weights = LinearWeights({"bm25": 0.5, "named": 0.0, "constant": -0.2})
    parts = weights.parts({"bm25": 0.8, "named": 1.0, "constant": 1.0, "unknown": 1.0, "usage": 0.0})
    assert parts == pytest.approx({"bm25": 0.4, "constant": -0.2})


@pytest.mark.parametrize(
    ("task", "name", "coverage"),
    [
        # Stems meet: "serializing" names the serializer.
        ("The migration writer fails when serializing a nested enum", "MigrationSerializer", 1.0),
        ("The migration writer fails when serializing a nested enum", "serializer_factory", 0.5),
        ("The migration writer fails when serializing a nested enum", "deconstruct", 0.0),
        # Words under three letters say nothing; a name of nothing else covers nothing.
        ("db io error", "db_io", 0.0),
    ],
)
def test_name_coverage_is_the_share_of_the_name_the_task_says(task: str, name: str, coverage: float) -> None:
    assert TaskNames(parse_task(task)).name(name) == pytest.approx(coverage)


@pytest.mark.parametrize(
    ("path", "named", "folder"),
    [
        ("django/db/migrations/serializer.py", "serializer", "migrations"),
        ("sympy/printing/__init__.py", "printing", "sympy"),
        ("src/cli/mod.rs", "cli", ""),
        ("src/lib.rs", "lib", ""),
        ("packages/vite/src/node/plugins/index.ts", "plugins", "node"),
        ("setup.py", "setup", ""),
    ],
)
def test_a_file_is_named_after_its_stem_or_its_folder(path: str, named: str, folder: str) -> None:
    assert file_name(path) == named
    assert folder_name(path) == folder


@pytest.mark.parametrize(
    ("title", "path", "scoped"),
    [
        # A folder anywhere in the path, whole or by its words, or the file itself.
        ("lsp: hover shows the wrong type", "helix-lsp/src/client.rs", 1.0),
        ("netty: abrupt GOAWAY should not cause INTERNAL", "netty/src/main/java/io/grpc/Handler.java", 1.0),
        ("fix(uring): close the ring", "transport-classes-io_uring/src/Channel.java", 1.0),
        ("tool_msgs: quote the file name", "src/tool_msgs.c", 1.0),
        ("config-win32.h: define HAVE_SNPRINTF", "lib/config-win32.h", 1.0),
        ("fix({react,preact}-query): default TData", "packages/preact-query/src/types.ts", 1.0),
        # Stems meet: the scope "serializers" names the serializer module.
        ("serializers: keep the enum's name", "django/db/migrations/serializer.py", 1.0),
        # Another part of the project, a change type, or no scope at all: nothing.
        ("lsp: hover shows the wrong type", "helix-term/src/ui/editor.rs", 0.0),
        ("fix: hover shows the wrong type", "helix-lsp/src/fix.rs", 0.0),
        ("Hover in lsp shows the wrong type", "helix-lsp/src/client.rs", 0.0),
    ],
)
def test_a_titles_scope_names_the_part_of_the_project_it_is_about(
    title: str, path: str, scoped: float
) -> None:
    assert TaskNames(parse_task(title)).scoped(path) == scoped
