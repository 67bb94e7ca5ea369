"""Learn the ranking weights (``server/smartctx/retrieval/rank_model.json``) from mined commit tasks.

The input is ``rank_features.py``'s dump of the training set's tasks (``commits.py extract --set
train``: commits of public repositories, none of them an evaluation repository): every candidate
definition and file with its signals and whether the change edited it. Two linear models are fitted,
one after the other, each by pairwise logistic loss within a task (every gold candidate against the
non-gold ones, most of them from the top of today's order, each task weighing the same) with an L2
penalty, every weight at least 0:

1. definitions: a gold definition is one the change edited (or one whose lines hold it). The
   weights are then scaled to the hand-set weights' scale (``rescaled``). A signal too few
   training tasks show (``MIN_TASKS_WITH_SIGNAL``: a stack frame, a named file or module) is not
   fitted; it keeps its hand-set weight on that scale.
2. files: a gold file is one the change modified. A file's ``definitions`` signals are its best
   definitions' own scores, so they are recomputed here with the weights of step 1 first.
3. stack frames, given ``--frames`` (a dump of ``commits.py --set tracebacks``: commits whose
   message quotes a traceback, which the training set's messages almost never do): the weights of
   ``FRAME_SIGNALS`` alone, every other weight held at step 1's. Validated the same way, by holding
   the traceback set's repositories out.

Validation holds whole repositories out, never tasks: each fifth of the repositories is scored by
weights learned from the other four fifths, and the report compares that with the hand-set weights
on the same tasks (the first gold definition's and gold file's place, Any@k and MRR). The penalty is
chosen the same way. ``--validate`` scores tasks of another kind, never learned from, by the same
held-out weights: the changelog entries of the training set's commits (``commits.py --set
train-changelog``) tell a change in its users' words, as an issue does, and a change that gains on
commit messages can lose there as it does on bug reports (bench/HISTORY.md, *Training tasks closer
to issues*). The model written is the one learned from all the training repositories, with
its provenance: the repositories, their pinned heads, the task count and the held-out figures.

    PYTHONPATH=server .venv/bin/python -m bench.quality.train_ranker \\
        --features /work/benchrepos/features/train.jsonl --write server/smartctx/retrieval/rank_model.json

Any task from a repository named in ``../shared/bench/never_train.txt`` stops the run: the evaluation
sets are built from those.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from bench.datasets import NEVER_TRAIN
from bench.quality.commit_tasks import (
    DEV_REPOS,
    DEV_WIDE_REPOS,
    TRACEBACK_REPOS,
    TRAIN_REPOS,
    DevRepo,
    never_train,
)
from bench.quality.swebench import format_table
from smartctx.retrieval.files import FILE_SIGNALS, FURTHER_DEFINITIONS
from smartctx.retrieval.rank_model import MODEL_FORMAT, RankModel
from smartctx.retrieval.score import DEFINITION_SIGNALS, FILE_PART, factor_of

# Definition signals that are not part of a definition's own score in a file's ``definitions``
# signal (files.py leaves its file's text part out: the file's ``text`` signal counts it).
NOT_OWN = frozenset({FILE_PART})
OWN_MASK = np.array([0.0 if name in NOT_OWN else 1.0 for name in DEFINITION_SIGNALS])
# Negatives per task: the best-ranked non-gold candidates (the ones a gold item must beat) and a
# random sample of the rest.
TOP_NEGATIVES = 60
RANDOM_NEGATIVES = 40
PENALTIES = (0.0001, 0.001, 0.01, 0.1)
# A signal non-zero in fewer training tasks than this is not learned: it keeps its hand-set weight.
MIN_TASKS_WITH_SIGNAL = 30
SEED = 23
# Signals never learned, held at their hand-set weight (0): ``reached`` marks a candidate only the
# graph reached, which score.py's graph-only factor ranks down; the label would learn it up, as a long
# class reached from its method holds the gold lines (bench/HISTORY.md, *Definitions within the
# right file*).
NEVER_LEARNED = frozenset({"reached"})
# The signals of a quoted stack trace: learned from the traceback set (``--frames``) alone.
FRAME_SIGNALS = frozenset({"frame", "innermostFrame"})
FRAME_MASK = np.array([name in FRAME_SIGNALS for name in DEFINITION_SIGNALS])
# Validation folds; each holds out a fifth of the repositories, whole.
REPOSITORY_FOLDS = 5
KS = (1, 3, 5, 10)
REPORT_HEADER = ["weights", "level", *(f"Any@{k} %" for k in KS), "MRR"]


@dataclass(frozen=True)
class Task:
    """One task's candidates as matrices, read once: rows in the dumped (today's) order."""

    repo: str
    # The definitions' signals times their file's kind factor (as the score multiplies), the same
    # without the factor (a file's ``definitions`` signals leave it out), their files' paths, labels.
    definitions: np.ndarray
    own_signals: np.ndarray
    definition_paths: list[str]
    definition_labels: np.ndarray
    # The files' signals (``definitions`` and ``furtherDefinitions`` filled in per weights), kind
    # factors, labels, and which definition rows belong to each file.
    files: np.ndarray
    file_factors: np.ndarray
    file_labels: np.ndarray
    file_members: list[np.ndarray]
    gold_files: frozenset[str]


def load(paths: Iterable[Path], forbidden: frozenset[str]) -> list[Task]:
    """The tasks of every dump; a task in two dumps (the training set's newest tasks and its
    described ones can share one, by its id) counts once."""
    tasks = []
    seen: set[str] = set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["repo"].lower() in forbidden:
                raise SystemExit(f"{row['repo']} is an evaluation repository: it must never be trained on")
            if row["instance_id"] not in seen:
                seen.add(row["instance_id"])
                tasks.append(prepared(row))
    return tasks


def prepared(row: Mapping[str, Any]) -> Task:
    definitions, files = row["definitions"], row["files"]
    own = _matrix([item["signals"] for item in definitions], DEFINITION_SIGNALS)
    factors = np.array([_kind_factor(item) for item in definitions])
    paths = [item["id"].split("::", 1)[0] for item in definitions]
    rows_of: defaultdict[str, list[int]] = defaultdict(list)
    for index, path in enumerate(paths):
        rows_of[path].append(index)
    return Task(
        repo=row["repo"],
        definitions=own * factors[:, None],
        own_signals=own,
        definition_paths=paths,
        definition_labels=np.array([is_gold_definition(item) for item in definitions], dtype=bool),
        files=_matrix([file["signals"] for file in files], FILE_SIGNALS),
        file_factors=np.array([_kind_factor(file) for file in files]),
        file_labels=np.array([bool(file["gold"]) for file in files], dtype=bool),
        file_members=[np.array(rows_of.get(file["path"], []), dtype=int) for file in files],
        gold_files=frozenset(row["goldFiles"]),
    )


def _matrix(signals: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[row.get(name, 0.0) for name in names] for row in signals], dtype=float).reshape(
        len(signals), len(names)
    )


def read_never_train(path: Path) -> frozenset[str]:
    """The evaluation repositories (with the dev sets', which the list may not hold); training
    without the list is refused, where ``commit_tasks.never_train`` reads a missing one as empty."""
    if not path.exists():
        raise SystemExit(f"no {path}: the list of evaluation repositories is needed to train safely")
    return never_train(path) | {repo.name.lower() for repo in (*DEV_REPOS, *DEV_WIDE_REPOS)}


def is_gold_definition(item: Mapping[str, Any]) -> bool:
    return bool(item["gold"] or item["holdsGold"])


def _kind_factor(item: Mapping[str, Any]) -> float:
    """What the item's added parts were multiplied by: its file's kind factor and, for a definition
    only the graph reached, the graph-only factor (``score.factor_of``)."""
    return factor_of(item["parts"])


def definition_matrix(task: Task) -> tuple[np.ndarray, np.ndarray]:
    return task.definitions, task.definition_labels


DEFINITIONS_COLUMN = FILE_SIGNALS.index("definitions")
FURTHER_COLUMN = FILE_SIGNALS.index("furtherDefinitions")


def file_matrix(task: Task, definition_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The files' signals, ``definitions`` and ``furtherDefinitions`` recomputed with the given
    definition weights, times the file's kind factor; and the labels."""
    own = task.own_signals @ (OWN_MASK * definition_weights)
    matrix = task.files.copy()
    for row, members in enumerate(task.file_members):
        scores = np.sort(own[members])[::-1]
        matrix[row, DEFINITIONS_COLUMN] = scores[0] if len(scores) else 0.0
        matrix[row, FURTHER_COLUMN] = scores[1 : 1 + FURTHER_DEFINITIONS].sum()
    return matrix * task.file_factors[:, None], task.file_labels


def pair_differences(matrix: np.ndarray, labels: np.ndarray, rng: random.Random) -> np.ndarray | None:
    """Each gold row minus each chosen non-gold row; None when the task has no pair."""
    positives = np.flatnonzero(labels)
    negatives = np.flatnonzero(~labels)
    if not len(positives) or not len(negatives):
        return None
    chosen = list(negatives[:TOP_NEGATIVES])
    rest = list(negatives[TOP_NEGATIVES:])
    chosen += rng.sample(rest, min(RANDOM_NEGATIVES, len(rest)))
    return (matrix[positives][:, None, :] - matrix[chosen][None, :, :]).reshape(-1, matrix.shape[1])


def fit(groups: Sequence[np.ndarray], penalty: float, start: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Weights minimising the mean over tasks of the mean pairwise logistic loss, plus the penalty;
    the ``fixed`` ones stay at their ``start``."""
    stacked = np.concatenate(groups)
    task_weight = np.concatenate([np.full(len(group), 1.0 / len(group)) for group in groups]) / len(groups)

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        margins = stacked @ weights
        losses = np.logaddexp(0.0, -margins)
        slope = -1.0 / (1.0 + np.exp(margins))
        value = float(task_weight @ losses) + penalty * float(weights @ weights)
        gradient = stacked.T @ (task_weight * slope) + 2 * penalty * weights
        return value, gradient

    # Every weight is at least 0: a signal can only add to a score, so scores stay positive (the
    # body floor and the focus parts are shares of them) and each part reads as a reason for the item.
    bounds = [(value, value) if held else (0.0, None) for value, held in zip(start, fixed, strict=True)]
    return np.asarray(minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds).x)


def first_gold(scores: np.ndarray, labels: np.ndarray) -> int | None:
    """The 1-based place of the best-placed gold row when sorted by score (ties: the dumped order)."""
    if not labels.any():
        return None
    order = np.lexsort((np.arange(len(scores)), -scores))
    return int(np.flatnonzero(labels[order])[0]) + 1


def first_gold_file_of_definitions(task: Task, scores: np.ndarray) -> int | None:
    """The gold file's place among the files in the order their definitions come (what a pack of
    bodies in definition order shows first)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    files: list[str] = []
    for index in order:
        path = task.definition_paths[index]
        if path not in files:
            files.append(path)
            if path in task.gold_files:
                return len(files)
    return None


@dataclass
class Ranks:
    definitions: list[int | None]
    files: list[int | None]
    files_by_definitions: list[int | None]

    def extend(self, other: Ranks) -> None:
        """Add another fold's ranks after these."""
        self.definitions += other.definitions
        self.files += other.files
        self.files_by_definitions += other.files_by_definitions


def evaluate(tasks: Sequence[Task], definition_weights: np.ndarray, file_weights: np.ndarray) -> Ranks:
    ranks = Ranks([], [], [])
    for task in tasks:
        matrix, labels = definition_matrix(task)
        scores = matrix @ definition_weights
        ranks.definitions.append(first_gold(scores, labels))
        ranks.files_by_definitions.append(first_gold_file_of_definitions(task, scores))
        files, file_labels = file_matrix(task, definition_weights)
        ranks.files.append(first_gold(files @ file_weights, file_labels))
    return ranks


def figures(ranks: Sequence[int | None]) -> dict[str, float]:
    count = len(ranks) or 1
    out = {f"@{k}": sum(1 for rank in ranks if rank is not None and rank <= k) / count for k in KS}
    out["MRR"] = sum(1.0 / rank for rank in ranks if rank is not None) / count
    return out


def train(
    tasks: Sequence[Task], penalty: float, rng: random.Random, left_out: frozenset[str] = NEVER_LEARNED
) -> tuple[np.ndarray, np.ndarray]:
    """Definition weights, then file weights over the file signals those make. A signal too few
    tasks show (``MIN_TASKS_WITH_SIGNAL``) is left out of the fit and keeps its hand-set weight on
    the hand-set scale: commit messages hold no stack trace, so a weight learned from them for
    ``frame`` would say nothing of a bug report's. So does every signal named in ``left_out``."""
    hand_definitions = vector(hand_set().definitions.weights, DEFINITION_SIGNALS)
    groups = [g for g in (pair_differences(*definition_matrix(task), rng) for task in tasks) if g is not None]
    rare = rare_signals([task.definitions for task in tasks]) | _chosen(DEFINITION_SIGNALS, left_out)
    fitted = rescaled(
        fit(groups, penalty, np.where(rare, 0.0, hand_definitions), rare), hand_definitions, tasks
    )
    definition_weights = np.where(rare, hand_definitions, fitted)
    hand_files = vector(hand_set().files.weights, FILE_SIGNALS)
    file_matrices = [file_matrix(task, definition_weights) for task in tasks]
    file_groups = [g for g in (pair_differences(*pair, rng) for pair in file_matrices) if g is not None]
    rare_files = rare_signals([matrix for matrix, _ in file_matrices]) | _chosen(FILE_SIGNALS, left_out)
    fitted_files = fit(file_groups, penalty, np.where(rare_files, 0.0, hand_files), rare_files)
    return definition_weights, np.where(rare_files, hand_files, fitted_files)


def _chosen(names: Sequence[str], chosen: frozenset[str]) -> np.ndarray:
    return np.array([name in chosen for name in names], dtype=bool)


def rare_signals(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """Which columns are non-zero in fewer than ``MIN_TASKS_WITH_SIGNAL`` of the tasks' matrices."""
    present = sum((np.abs(matrix).sum(axis=0) > 0).astype(int) for matrix in matrices if len(matrix))
    return np.asarray(present < MIN_TASKS_WITH_SIGNAL)


def rescaled(weights: np.ndarray, reference: np.ndarray, tasks: Sequence[Task]) -> np.ndarray:
    """``weights`` scaled so that a task's best definition scores, on average, what it does with the
    ``reference`` weights. Ranking does not change with the scale, but the editor's focus parts
    (``focus.py``) are set by hand on the reference's scale, and they keep their strength on this one."""
    matrices = [task.definitions for task in tasks if len(task.definitions)]
    best = sum(float((matrix @ weights).max()) for matrix in matrices)
    best_reference = sum(float((matrix @ reference).max()) for matrix in matrices)
    return weights * (best_reference / best) if best > 0 else weights


def vector(weights: Mapping[str, float], names: Sequence[str]) -> np.ndarray:
    return np.array([weights.get(name, 0.0) for name in names], dtype=float)


def hand_set() -> RankModel:
    """The weights before any training: the shipped file's, whatever it holds, is not used here;
    these are the hand-set weights of issues #3 to #14, the baseline every learned model is held
    against, with priors for the new signals too rare to learn."""
    return RankModel.from_json(HAND_SET)


HAND_SET: Mapping[str, Any] = {
    "format": MODEL_FORMAT,
    "definitions": {
        "bm25": 0.5,
        "pagerank": 0.3,
        "usage": 0.2,
        "file": 2.0,
        "named": 0.6,
        "namedExactly": 0.4,
        "frame": 1.2,
        # A prior, as no commit message quotes a stack trace: the failing frame of the project's own
        # code counts as a second frame.
        "innermostFrame": 1.2,
        "mentionedFile": 0.3,
        # New with the learned weights, too rare in commit messages to learn: a module path names a
        # file as a file path does.
        "moduleNamed": 0.3,
        "testVotes": 0.1,
    },
    # A file the task names by path or module gets, as a file, what its definitions get.
    "files": {
        "text": 2.0,
        "definitions": 1.0,
        "furtherDefinitions": 0.25,
        "mentionedFile": 0.3,
        "moduleNamed": 0.3,
    },
}


def repository_folds(tasks: Sequence[Task]) -> list[tuple[list[Task], list[Task]]]:
    """``REPOSITORY_FOLDS`` splits of the tasks, each holding out whole repositories (every fifth of
    them in name order) and training on the others."""
    repos = sorted({task.repo for task in tasks})
    folds = []
    for fold in range(min(REPOSITORY_FOLDS, len(repos))):
        held_repos = set(repos[fold::REPOSITORY_FOLDS])
        folds.append(
            (
                [task for task in tasks if task.repo in held_repos],
                [t for t in tasks if t.repo not in held_repos],
            )
        )
    return folds


def frame_weights(tasks: Sequence[Task], definition_weights: np.ndarray, penalty: float) -> np.ndarray:
    """``definition_weights`` with the frame signals' weights fitted on ``tasks`` (tasks that quote a
    stack trace), every other weight held where it is."""
    rng = random.Random(SEED)
    groups = [g for g in (pair_differences(*definition_matrix(task), rng) for task in tasks) if g is not None]
    return fit(groups, penalty, definition_weights, ~FRAME_MASK)


def held_out_frames(
    tasks: Sequence[Task], definition_weights: np.ndarray, file_weights: np.ndarray, penalty: float
) -> dict[str, Ranks]:
    """The traceback tasks of each fold of repositories ranked with frame weights fitted on the
    other folds, and with ``definition_weights`` as they are."""
    before = Ranks([], [], [])
    learned = Ranks([], [], [])
    for held, others in repository_folds(tasks):
        fitted = frame_weights(others, definition_weights, penalty)
        for total, weights in ((before, definition_weights), (learned, fitted)):
            part = evaluate(held, weights, file_weights)
            total.extend(part)
    return {"before": before, "learned": learned}


def held_out(
    tasks: Sequence[Task],
    penalty: float,
    left_out: frozenset[str] = NEVER_LEARNED,
    scored: Sequence[Task] | None = None,
) -> dict[str, Ranks]:
    """Every repository's tasks ranked by weights learned without that repository, and by hand; or,
    given ``scored`` (tasks of another kind, never learned from), those tasks ranked the same way,
    a repository no training task shares by the weights of all."""
    scored = tasks if scored is None else scored
    learned = Ranks([], [], [])
    baseline = Ranks([], [], [])
    hand_definitions = vector(hand_set().definitions.weights, DEFINITION_SIGNALS)
    hand_files = vector(hand_set().files.weights, FILE_SIGNALS)
    untrained = {task.repo for task in scored} - {task.repo for task in tasks}
    folds = [({task.repo for task in held}, others) for held, others in repository_folds(tasks)]
    for repos, others in [*folds, (untrained, list(tasks))]:
        ranked = [task for task in scored if task.repo in repos]
        if not ranked:
            continue
        definition_weights, file_weights = train(others, penalty, random.Random(SEED), left_out)
        learned.extend(evaluate(ranked, definition_weights, file_weights))
        baseline.extend(evaluate(ranked, hand_definitions, hand_files))
    return {"hand-set": baseline, "learned": learned}


def held_out_lambdamart(tasks: Sequence[Task], penalty: float) -> Ranks:
    """As ``held_out``, with LightGBM's LambdaMART in place of each linear model (the files' signals
    still come from the linear definition weights): the comparison that decides whether a linear
    model is enough."""
    import lightgbm  # the bench extra; only this comparison needs it

    ranks = Ranks([], [], [])
    for held, others in repository_folds(tasks):
        definition_weights, _ = train(others, penalty, random.Random(SEED))
        models = []
        for matrices in (
            [definition_matrix(task) for task in others],
            [file_matrix(task, definition_weights) for task in others],
        ):
            kept = [(matrix, labels) for matrix, labels in matrices if labels.any() and len(labels) > 1]
            data = lightgbm.Dataset(
                np.concatenate([matrix for matrix, _ in kept]),
                label=np.concatenate([labels for _, labels in kept]).astype(int),
                group=[len(labels) for _, labels in kept],
            )
            params = {"objective": "lambdarank", "learning_rate": 0.05, "verbose": -1, "seed": SEED}
            models.append(lightgbm.train(params, data, num_boost_round=200))
        for task in held:
            matrix, labels = definition_matrix(task)
            scores = models[0].predict(matrix) if len(labels) else np.zeros(0)
            ranks.definitions.append(first_gold(scores, labels))
            ranks.files_by_definitions.append(first_gold_file_of_definitions(task, scores))
            files, file_labels = file_matrix(task, definition_weights)
            file_scores = models[1].predict(files) if len(file_labels) else np.zeros(0)
            ranks.files.append(first_gold(file_scores, file_labels))
    return ranks


def report(results: Mapping[str, Ranks]) -> list[list[str]]:
    rows = []
    for name, ranks in results.items():
        for level, values in (
            ("definition", ranks.definitions),
            ("file (file ranker)", ranks.files),
            ("file (definition order)", ranks.files_by_definitions),
        ):
            found = figures(values)
            rows.append([name, level, *(f"{100 * found[f'@{k}']:.1f}" for k in KS), f"{found['MRR']:.3f}"])
    return rows


def model_json(
    definition_weights: np.ndarray, file_weights: np.ndarray, provenance: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "format": MODEL_FORMAT,
        "definitions": _named(DEFINITION_SIGNALS, definition_weights),
        "files": _named(FILE_SIGNALS, file_weights),
        "provenance": provenance,
    }


def _named(names: Sequence[str], weights: np.ndarray) -> dict[str, float]:
    return {name: round(float(weight), 4) for name, weight in zip(names, weights, strict=True) if weight}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=Path, nargs="+", required=True, help="rank_features.py dumps")
    parser.add_argument("--never-train", type=Path, default=NEVER_TRAIN)
    parser.add_argument(
        "--penalty", type=float, help="the L2 penalty (chosen on held-out repositories if unset)"
    )
    parser.add_argument(
        "--lambdamart", action="store_true", help="also hold LightGBM's LambdaMART against the linear model"
    )
    parser.add_argument(
        "--leave-out",
        type=lambda text: frozenset(name for name in text.split(",") if name),
        default=frozenset(),
        help="signals held at their hand-set weight besides those never learned (to measure what one adds)",
    )
    parser.add_argument(
        "--frames", type=Path, help="a rank_features.py dump of the traceback set: learn the frame weights"
    )
    parser.add_argument(
        "--validate",
        type=Path,
        nargs="+",
        default=[],
        help="rank_features.py dumps never learned from (the changelog set): scored held out by repository",
    )
    parser.add_argument("--write", type=Path, help="write the learned model here (e.g. the shipped file)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    frame_repos = frozenset(repo.name.lower() for repo in TRACEBACK_REPOS)
    tasks = load(args.features, read_never_train(args.never_train) | frame_repos)
    repos = sorted({task.repo for task in tasks})
    print(f"{len(tasks)} tasks from {len(repos)} repositories")
    penalties = [args.penalty] if args.penalty is not None else list(PENALTIES)
    left_out = NEVER_LEARNED | args.leave_out
    best: tuple[float, float, dict[str, Ranks]] | None = None
    for penalty in penalties:
        results = held_out(tasks, penalty, left_out)
        if args.lambdamart:
            results = {**results, "LambdaMART": held_out_lambdamart(tasks, penalty)}
        learned = figures(results["learned"].definitions)["MRR"] + figures(results["learned"].files)["MRR"]
        print(f"\npenalty {penalty}: held out by repository (k = {', '.join(map(str, KS))})")
        print(format_table(REPORT_HEADER, report(results)))
        if best is None or learned > best[0]:
            best = (learned, penalty, results)
    assert best is not None
    _, penalty, results = best
    print(f"\nchosen penalty: {penalty}")
    validated: dict[str, Any] = {}
    if args.validate:
        validation = load(args.validate, read_never_train(args.never_train) | frame_repos)
        validation_results = held_out(tasks, penalty, left_out, scored=validation)
        print(f"\n{len(validation)} validation tasks, never learned from, held out by repository")
        print(format_table(REPORT_HEADER, report(validation_results)))
        validated = {"tasks": len(validation), "heldOutByRepository": held_figures(validation_results)}
    definition_weights, file_weights = train(tasks, penalty, random.Random(SEED), left_out)
    frames: dict[str, Any] = {}
    if args.frames is not None:
        frame_tasks = load([args.frames], read_never_train(args.never_train))
        frame_results = held_out_frames(frame_tasks, definition_weights, file_weights, penalty)
        print(f"\nframe weights from {len(frame_tasks)} traceback tasks, held out by repository")
        print(format_table(REPORT_HEADER, report(frame_results)))
        definition_weights = frame_weights(frame_tasks, definition_weights, penalty)
        frames = {
            "source": "frame weights learned by bench/quality/train_ranker.py --frames from commits that"
            " quote a traceback (bench/quality/commit_tasks.py TRACEBACK_REPOS), the others held",
            "tasks": len(frame_tasks),
            "repositories": pinned_heads(Counter(task.repo for task in frame_tasks), TRACEBACK_REPOS),
            "heldOutByRepository": held_figures(frame_results),
        }
    for names, weights in ((DEFINITION_SIGNALS, definition_weights), (FILE_SIGNALS, file_weights)):
        print(", ".join(f"{name} {weight:+.3f}" for name, weight in zip(names, weights, strict=True)))
    if args.write is None:
        return 0
    kept_definitions = _rare_names(DEFINITION_SIGNALS, [task.definitions for task in tasks])
    provenance: dict[str, Any] = {
        "source": "learned by bench/quality/train_ranker.py from commit tasks"
        " (bench/quality/commit_tasks.py TRAIN_REPOS)",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "tasks": len(tasks),
        "repositories": pinned_heads(Counter(task.repo for task in tasks), TRAIN_REPOS),
        "penalty": penalty,
        "keptHandSet": {
            "definitions": [name for name in kept_definitions if not (frames and name in FRAME_SIGNALS)],
            "files": _rare_names(FILE_SIGNALS, [file_matrix(task, definition_weights)[0] for task in tasks]),
        },
        "heldOutByRepository": held_figures(results),
        **({"frames": frames} if frames else {}),
        **({"validation": validated} if validated else {}),
    }
    args.write.write_text(
        json.dumps(model_json(definition_weights, file_weights, provenance), indent=2) + "\n"
    )
    print(f"wrote {args.write}")
    return 0


def _rare_names(names: Sequence[str], matrices: Sequence[np.ndarray]) -> list[str]:
    return [name for name, rare in zip(names, rare_signals(matrices), strict=True) if rare]


def held_figures(results: Mapping[str, Ranks]) -> dict[str, dict[str, dict[str, float]]]:
    """Held-out figures for the provenance: each model's Any@k and MRR, for definitions and files."""
    return {
        name: {
            level: {k: round(v, 4) for k, v in figures(values).items()}
            for level, values in (("definitions", ranks.definitions), ("files", ranks.files))
        }
        for name, ranks in results.items()
    }


def pinned_heads(counts: Mapping[str, int], pinned: Iterable[DevRepo]) -> list[dict[str, Any]]:
    """Each repository learned from with its pinned head (from ``pinned``) and task count."""
    heads = {repo.name: repo.head for repo in pinned}
    return [
        {"repo": repo, "head": heads.get(repo, ""), "tasks": count} for repo, count in sorted(counts.items())
    ]


if __name__ == "__main__":
    sys.exit(main())
