"""How far LLM labels can be trusted: against human labels when there are some, and from
the labels alone (agreement of repeated samples, the pull of passage length) when not."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmetrics.data._qrels import Qrels
from ragmetrics.data._run import Run
from ragmetrics.errors import InputFormatError, InvalidParameterError
from ragmetrics.formats._atomic import open_atomic, write_text
from ragmetrics.goldset._agreement import (
    GRADES,
    confusion,
    kendall_tau_b,
    krippendorff_alpha_ordinal,
    spearman,
    weighted_kappa,
)


@dataclass
class Audit:
    """What an audit found (see :func:`audit`); NaN or None where it could not be measured.

    Attributes:
        n_pairs: pairs both labelings grade (with human labels), or pairs graded.
        kappa: Cohen's kappa, quadratic weights over 1..5; alpha: Krippendorff's alpha,
            ordinal (both on the pairs both grade).
        confusion: 5 x 5 counts, rows the LLM's grade 1..5, columns the human's.
        prevalence: labeling -> grade -> (share of the pairs, low, high): a 95% interval from
            resampling queries.
        runs: run -> (RA-nWG@k with the LLM's labels, with the human's); tau: Kendall's tau-b
            of the two orderings of the runs.
        sample_alpha, sample_disagreement: with repeated samples, alpha across them and the
            share of pairs whose samples differ.
        length_rho: Spearman's rho of grade and passage length (a known judge bias: near 0
            is good).
    """

    n_pairs: int
    kappa: float | None = None
    alpha: float | None = None
    confusion: list[list[int]] | None = None
    prevalence: dict[str, dict[int, tuple[float, float, float]]] = field(default_factory=dict)
    runs: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    tau: float | None = None
    cutoff: int | None = None
    sample_alpha: float | None = None
    sample_disagreement: float | None = None
    length_rho: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != {}}

    def to_markdown(self) -> str:
        lines = [f"**Audit** of {self.n_pairs} pairs", ""]
        rows = [
            ("weighted kappa (quadratic)", self.kappa),
            ("Krippendorff's alpha (ordinal)", self.alpha),
            ("Kendall's tau of the runs' order", self.tau),
            ("alpha across repeated samples", self.sample_alpha),
            ("share of pairs whose samples differ", self.sample_disagreement),
            ("Spearman's rho, grade vs passage length", self.length_rho),
        ]
        lines += ["| statistic | value |", "|---|---:|"]
        lines += [f"| {name} | {_fmt(v)} |" for name, v in rows if v is not None]
        if self.confusion is not None:
            lines += ["", "Confusion (rows: LLM grade, columns: human grade)", ""]
            lines += ["| LLM \\ human | " + " | ".join(map(str, GRADES)) + " |"]
            lines += ["|---|" + "---:|" * len(GRADES)]
            lines += [
                f"| {g} | " + " | ".join(map(str, row)) + " |"
                for g, row in zip(GRADES, self.confusion, strict=True)
            ]
        if self.prevalence:
            lines += ["", "Grade prevalence (95% interval over queries)", ""]
            lines += ["| labels | " + " | ".join(map(str, GRADES)) + " |", "|---|" + "---:|" * 5]
            for name, shares in self.prevalence.items():
                cells = [f"{s:.2f} [{lo:.2f}, {hi:.2f}]" for s, lo, hi in shares.values()]
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
        if self.runs:
            lines += ["", f"RA-nWG@{self.cutoff} under each labeling", ""]
            lines += ["| run | LLM labels | human labels |", "|---|---:|---:|"]
            lines += [f"| {r} | {_fmt(a)} | {_fmt(b)} |" for r, (a, b) in self.runs.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_markdown()


def _fmt(value: float | None) -> str:
    return "NA" if value is None or value != value else f"{value:.3f}"


def _or_none(value: float) -> float | None:
    return None if value != value else float(value)


def audit(
    llm: Any,
    human_qrels: Qrels | Mapping[str, Mapping[str, int]] | str | os.PathLike[str] | None = None,
    *,
    runs: Mapping[str, Run] | None = None,
    k: int = 10,
    dataset: Any = None,
    seed: int = 0,
    n_resamples: int = 1000,
) -> Audit:
    """Audit LLM labels (a :class:`GoldSet`, or qrels on 1..5).

    With ``human_qrels`` (qrels, or a review file from :func:`export_sample` filled in):
    weighted kappa, ordinal alpha, the confusion matrix and each labeling's grade
    prevalence with intervals by query, on the pairs both grade; with ``runs``, each run's
    RA-nWG@``k`` under both labelings and Kendall's tau of the two orders of runs.

    Always, from the labels alone: agreement across repeated samples (a GoldSet graded with
    ``samples`` > 1), and with ``dataset`` the correlation of grade with passage length.
    """
    llm_qrels = getattr(llm, "qrels", llm)
    llm_qrels = Qrels.from_dict(llm_qrels) if isinstance(llm_qrels, Mapping) else llm_qrels
    if not isinstance(llm_qrels, Qrels):
        raise InputFormatError("audit() takes a GoldSet or qrels graded 1..5.")
    _check_scale(llm_qrels, "the LLM's labels")
    pairs = [(q, d, g) for q in llm_qrels.query_ids for d, g in llm_qrels[q].items()]
    result = Audit(n_pairs=len(pairs))
    grades = getattr(llm, "grades", None)
    if grades:
        repeated = [g for g in grades.values() if len(g) > 1]
        if repeated:
            width = max(map(len, repeated))
            data = np.full((width, len(repeated)), np.nan)
            for unit, given in enumerate(repeated):
                for coder, value in enumerate(given):
                    if value is not None:
                        data[coder, unit] = value
            result.sample_alpha = _or_none(krippendorff_alpha_ordinal(data))
            differ = [len({g for g in given if g is not None}) > 1 for given in repeated]
            result.sample_disagreement = float(np.mean(differ))
    if dataset is not None:
        corpus = getattr(dataset, "corpus", {})
        known = [(len(str(corpus[d])), g) for _, d, g in pairs if d in corpus]
        if len(known) > 1:
            lengths, values = zip(*known, strict=True)
            result.length_rho = _or_none(spearman(np.array(lengths), np.array(values)))
    if human_qrels is None:
        return result
    human = read_sample(human_qrels) if isinstance(human_qrels, (str, os.PathLike)) else human_qrels
    human = Qrels.from_dict(human) if isinstance(human, Mapping) else human
    _check_scale(human, "the human labels")
    both = [(q, d, g, human[q][d]) for q, d, g in pairs if q in human and d in human[q]]
    if not both:
        raise InputFormatError(
            "The LLM's labels and the human labels share no (query, doc) pair: nothing to "
            "compare. Check that both use the same ids."
        )
    llm_grades = np.array([b[2] for b in both])
    human_grades = np.array([b[3] for b in both])
    result.n_pairs = len(both)
    result.kappa = _or_none(weighted_kappa(llm_grades, human_grades))
    result.alpha = _or_none(krippendorff_alpha_ordinal(np.vstack([llm_grades, human_grades])))
    result.confusion = confusion(llm_grades, human_grades).tolist()
    queries = [b[0] for b in both]
    result.prevalence = {
        "LLM": _prevalence(queries, llm_grades, seed, n_resamples),
        "human": _prevalence(queries, human_grades, seed, n_resamples),
    }
    if runs:
        result.cutoff = k
        result.runs, result.tau = _runs_under_both(runs, llm_qrels, human, k)
    return result


def _check_scale(qrels: Qrels, what: str) -> None:
    outside = sorted({g for g in qrels.grade_values() if g not in GRADES})
    if outside:
        raise InvalidParameterError(
            f"{what} must be utility grades 1..5; found {outside[:5]}. Map other scales first "
            f"(e.g. {{0: 1, 1: 3, 2: 4, 3: 5}} for TREC 0..3)."
        )


def _prevalence(
    queries: list[str], grades: np.ndarray, seed: int, n_resamples: int
) -> dict[int, tuple[float, float, float]]:
    """Each grade's share of the pairs, with a 95% interval from resampling whole queries."""
    names = sorted(set(queries))
    code = {q: i for i, q in enumerate(names)}
    rows = np.array([code[q] for q in queries])
    counts = np.zeros((len(names), len(GRADES)))
    np.add.at(counts, (rows, grades - 1), 1)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(names), (n_resamples, len(names)))
    resampled = counts[picks].sum(axis=1)
    shares = resampled / resampled.sum(axis=1, keepdims=True)
    total = counts.sum(axis=0) / counts.sum()
    low, high = np.quantile(shares, [0.025, 0.975], axis=0)
    return {g: (float(total[i]), float(low[i]), float(high[i])) for i, g in enumerate(GRADES)}


def _runs_under_both(
    runs: Mapping[str, Run], llm: Qrels, human: Qrels, k: int
) -> tuple[dict[str, tuple[float | None, float | None]], float | None]:
    from ragmetrics.engine._evaluation import evaluate

    metric = f"ra_nwg@{k}"
    scores: dict[str, tuple[float | None, float | None]] = {}
    for name, run in runs.items():
        under_llm = evaluate(llm, run, metric, missing="skip")[metric]
        under_human = evaluate(human, run, metric, missing="skip")[metric]
        scores[name] = (under_llm, under_human)
    defined = [(a, b) for a, b in scores.values() if a is not None and b is not None]
    tau = None
    if len(defined) >= 2:
        first, second = zip(*defined, strict=True)
        tau = _or_none(kendall_tau_b(np.array(first), np.array(second)))
    return scores, tau


def export_sample(
    gold: Any,
    dataset: Any,
    path: str | os.PathLike[str],
    *,
    per_grade: int = 10,
    seed: int = 0,
) -> int:
    """Write a sample for human review, stratified by the LLM's grade (up to ``per_grade``
    pairs of each grade 1..5), as CSV or JSONL (by the file's suffix), with an empty
    ``human_grade`` to fill in; :func:`audit` reads it back. Returns the rows written."""
    qrels = getattr(gold, "qrels", gold)
    rng = np.random.default_rng(seed)
    by_grade: dict[int, list[tuple[str, str]]] = {g: [] for g in GRADES}
    for q in qrels.query_ids:
        for d, g in qrels[q].items():
            by_grade.setdefault(g, []).append((q, d))
    chosen = []
    for g in GRADES:
        members = by_grade[g]
        picks = rng.permutation(len(members))[:per_grade].tolist()
        chosen += [(members[i][0], members[i][1], g) for i in sorted(picks)]
    rows = [
        {
            "query_id": q,
            "doc_id": d,
            "query": str(dataset.queries.get(q, "")),
            "passage": str(dataset.corpus.get(d, "")),
            "llm_grade": g,
            "human_grade": "",
        }
        for q, d, g in chosen
    ]
    target = Path(path)
    if target.suffix == ".jsonl":
        write_text(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    else:
        with open_atomic(target, newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["query_id"])
            writer.writeheader()
            writer.writerows(rows)
    return len(rows)


def read_sample(path: str | os.PathLike[str]) -> Qrels:
    """The human grades of a review file from :func:`export_sample` (rows left blank are
    skipped; a grade outside 1..5 names its row)."""
    target = Path(path)
    if target.suffix == ".jsonl":
        rows = [json.loads(line) for line in target.read_text("utf-8").splitlines() if line.strip()]
    else:
        with open(target, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    graded: dict[str, dict[str, int]] = {}
    for number, row in enumerate(rows, start=1):
        value = str(row.get("human_grade", "")).strip()
        if not value:
            continue
        if value not in {"1", "2", "3", "4", "5"}:
            raise InputFormatError(
                f"{target}, row {number}: human_grade must be 1..5 or blank; got {value!r}."
            )
        graded.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = int(value)
    if not graded:
        raise InputFormatError(f"{target}: no row has a human_grade yet.")
    return Qrels.from_dict(graded)
