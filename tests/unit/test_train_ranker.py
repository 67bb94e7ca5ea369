"""The ranking trainer (bench/quality/train_ranker.py) on made-up tasks: it learns the signal that tells gold
from the rest, holds whole repositories out, writes a model smartctx can load, and refuses tasks of
an evaluation repository."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bench.quality import train_ranker
from smartctx.retrieval.rank_model import RankModel


@pytest.fixture(scope="module")
def trainer() -> ModuleType:
    return train_ranker


def made_up_task(rng: random.Random, repo: str) -> dict[str, Any]:
    """Thirty definitions in six files; BM25 is noise, and only the gold definition's name is wholly
    said by the task (``nameWords`` 1), as is its file's (``fileName`` 1)."""
    gold_index = rng.randrange(30)
    definitions = []
    for index in range(30):
        gold = index == gold_index
        path = f"pkg/module{index % 6}.py"
        signals = {"bm25": rng.random(), "pagerank": rng.random(), "nameWords": 1.0 if gold else 0.0}
        definitions.append(
            {
                "id": f"{path}::f{index}",
                "signals": signals,
                "parts": {},
                "gold": gold,
                "holdsGold": False,
            }
        )
    gold_path = definitions[gold_index]["id"].split("::")[0]
    files = [
        {
            "path": f"pkg/module{index}.py",
            "signals": {
                "text": rng.random(),
                "fileName": 1.0 if f"pkg/module{index}.py" == gold_path else 0.0,
            },
            "parts": {},
            "gold": f"pkg/module{index}.py" == gold_path,
        }
        for index in range(6)
    ]
    return {
        "instance_id": f"{repo}-{rng.getrandbits(48):012x}",
        "repo": repo,
        "goldFiles": [gold_path],
        "definitions": definitions,
        "files": files,
    }


@pytest.fixture
def features(tmp_path: Path) -> Path:
    rng = random.Random(7)
    path = tmp_path / "features.jsonl"
    rows = [made_up_task(rng, f"owner/repo{index % 3}") for index in range(45)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def never_train(tmp_path: Path) -> Path:
    path = tmp_path / "never_train.txt"
    path.write_text("# evaluation sets\nowner/evaluated\n")
    return path


def test_it_learns_the_signal_that_finds_the_gold_and_writes_a_loadable_model(
    trainer: ModuleType, features: Path, never_train: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rank_model.json"
    argv = ["--features", str(features), "--never-train", str(never_train), "--penalty", "0.01"]
    assert trainer.main([*argv, "--write", str(out)]) == 0
    data = json.loads(out.read_text())
    model = RankModel.from_json(data)
    assert model.definitions.weight("nameWords") > 5 * model.definitions.weight("bm25")
    assert model.files.weight("fileName") > 5 * model.files.weight("text")
    assert all(weight >= 0 for weight in (*model.definitions.weights.values(), *model.files.weights.values()))
    assert [repo["repo"] for repo in data["provenance"]["repositories"]] == [
        "owner/repo0",
        "owner/repo1",
        "owner/repo2",
    ]
    # Held out by repository, the learned weights find every gold definition first; by hand, BM25 noise
    # leaves it first only now and then.
    held = data["provenance"]["heldOutByRepository"]
    assert held["learned"]["definitions"]["@1"] == 1.0
    assert held["hand-set"]["definitions"]["@1"] < 0.5


def test_a_task_in_two_dumps_is_learned_from_once(
    trainer: ModuleType, features: Path, never_train: Path, tmp_path: Path
) -> None:
    rows = features.read_text().splitlines()
    described = tmp_path / "described.jsonl"
    extra = made_up_task(random.Random(3), "owner/repo0")
    described.write_text("".join(line + "\n" for line in [*rows[:10], json.dumps(extra)]))
    out = tmp_path / "rank_model.json"
    argv = ["--features", str(features), str(described), "--never-train", str(never_train)]
    assert trainer.main([*argv, "--penalty", "0.01", "--write", str(out)]) == 0
    provenance = json.loads(out.read_text())["provenance"]
    assert provenance["tasks"] == len(rows) + 1
    assert sum(repo["tasks"] for repo in provenance["repositories"]) == len(rows) + 1


def test_validation_tasks_are_scored_held_out_and_never_learned_from(
    trainer: ModuleType, features: Path, never_train: Path, tmp_path: Path
) -> None:
    """Validation tasks of another kind: the task's words name a decoy, not the definition to change.
    The held-out weights, which learned that names find the gold, rank the decoy first there; and
    the model written is the one learned without them."""
    rng = random.Random(5)
    rows = []
    for index in range(20):
        row = made_up_task(rng, f"owner/repo{index % 4}")
        gold = next(item for item in row["definitions"] if item["gold"])
        decoy = next(item for item in row["definitions"] if not item["gold"])
        gold["signals"]["nameWords"], decoy["signals"]["nameWords"] = 0.0, 1.0
        rows.append(row)
    validation = tmp_path / "changelog.jsonl"
    validation.write_text("".join(json.dumps(row) + "\n" for row in rows))
    plain, validated = tmp_path / "plain.json", tmp_path / "validated.json"
    argv = ["--features", str(features), "--never-train", str(never_train), "--penalty", "0.01"]
    assert trainer.main([*argv, "--write", str(plain)]) == 0
    assert trainer.main([*argv, "--validate", str(validation), "--write", str(validated)]) == 0
    with_validation = json.loads(validated.read_text())
    without = json.loads(plain.read_text())
    assert with_validation["definitions"] == without["definitions"]
    assert with_validation["files"] == without["files"]
    figures = with_validation["provenance"]["validation"]
    assert figures["tasks"] == 20
    # Every task is scored, owner/repo3's too, which no training task shares.
    tasks = trainer.load([features], frozenset())
    scored = trainer.held_out(tasks, 0.01, scored=trainer.load([validation], frozenset()))
    assert len(scored["learned"].definitions) == len(scored["hand-set"].files) == 20
    assert figures["heldOutByRepository"]["learned"]["definitions"]["@1"] == 0.0
    assert figures["heldOutByRepository"]["learned"]["definitions"]["@10"] > 0.0


def test_a_task_of_an_evaluation_repository_stops_the_training(
    trainer: ModuleType, tmp_path: Path, never_train: Path
) -> None:
    path = tmp_path / "features.jsonl"
    path.write_text(json.dumps(made_up_task(random.Random(1), "Owner/Evaluated")) + "\n")
    with pytest.raises(SystemExit, match="must never be trained on"):
        trainer.main(["--features", str(path), "--never-train", str(never_train)])


def test_without_the_list_of_evaluation_repositories_it_does_not_train(
    trainer: ModuleType, features: Path, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit, match="needed to train safely"):
        trainer.main(["--features", str(features), "--never-train", str(tmp_path / "missing.txt")])


def traceback_task(rng: random.Random, repo: str) -> dict[str, Any]:
    """A made-up task quoting a traceback: two frames in different files, the gold one innermost;
    the outer frame's definition is also named by the task (``named``, ``nameWords``)."""
    task = made_up_task(rng, repo)
    for definition in task["definitions"]:
        definition["signals"].pop("nameWords", None)
    gold = next(definition for definition in task["definitions"] if definition["gold"])
    outer = next(
        definition
        for definition in task["definitions"]
        if definition["id"].split("::")[0] != gold["id"].split("::")[0]
    )
    gold["signals"].update(frame=1.0, innermostFrame=1.0, bm25=0.2)
    outer["signals"].update(frame=1.0, named=1.0, nameWords=1.0)
    return task


def test_the_frame_weights_are_learned_from_the_traceback_set_alone(
    trainer: ModuleType, features: Path, never_train: Path, tmp_path: Path
) -> None:
    rng = random.Random(11)
    frames = tmp_path / "frames.jsonl"
    rows = [traceback_task(rng, f"owner/crashes{index % 3}") for index in range(30)]
    frames.write_text("".join(json.dumps(row) + "\n" for row in rows))
    argv = ["--features", str(features), "--never-train", str(never_train), "--penalty", "0.01"]
    plain, learned = tmp_path / "plain.json", tmp_path / "learned.json"
    assert trainer.main([*argv, "--write", str(plain)]) == 0
    assert trainer.main([*argv, "--frames", str(frames), "--write", str(learned)]) == 0
    before, after = (json.loads(path.read_text()) for path in (plain, learned))
    # The commit tasks hold no frame: without --frames the frame signals keep their priors.
    assert before["definitions"]["frame"] == before["definitions"]["innermostFrame"] == 1.2
    assert after["definitions"]["innermostFrame"] > max(1.2, after["definitions"]["frame"])
    assert {k: v for k, v in after["definitions"].items() if k not in ("frame", "innermostFrame")} == {
        k: v for k, v in before["definitions"].items() if k not in ("frame", "innermostFrame")
    }
    assert after["files"] == before["files"]
    assert "frame" not in after["provenance"]["keptHandSet"]["definitions"]
    frames_held = after["provenance"]["frames"]["heldOutByRepository"]
    assert frames_held["learned"]["definitions"]["@1"] > frames_held["before"]["definitions"]["@1"]
    assert after["provenance"]["frames"]["tasks"] == 30
