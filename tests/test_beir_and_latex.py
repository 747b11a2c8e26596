"""BEIR folders, 3-column and list-style qrels, near-miss formats named, LaTeX tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmetrics as rm
from ragmetrics.data._files import read_qrels, read_run
from ragmetrics.errors import InputFormatError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_three_column_qrels_with_and_without_header(tmp_path: Path) -> None:
    beir = _write(
        tmp_path / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"
    )
    plain = _write(tmp_path / "plain.txt", "q1 d1 1\nq1 d2 0\n\nq2 d3 2\n")
    expected = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    assert rm.Qrels.from_tsv(beir).to_dict() == expected
    assert rm.Qrels.from_tsv(plain).to_dict() == expected
    assert read_qrels(beir).to_dict() == expected  # by suffix
    assert read_qrels(plain).to_dict() == expected  # by content


def test_three_column_mistakes_are_named(tmp_path: Path) -> None:
    twice = _write(tmp_path / "a.tsv", "q1\td1\t1\nq1\td1\t2\n")
    with pytest.raises(
        InputFormatError, match=r"line 2: doc 'd1' of query 'q1' is judged twice, 1 and 2"
    ):
        rm.Qrels.from_tsv(twice)
    trec = _write(tmp_path / "b.tsv", "q1 0 d1 1\n")
    with pytest.raises(InputFormatError, match=r"found 4: .*read them with Qrels\.from_trec"):
        rm.Qrels.from_tsv(trec)
    grade = _write(tmp_path / "c.tsv", "query-id corpus-id score\nq1 d1 0.5\n")
    with pytest.raises(InputFormatError, match=r"line 2: field 3 must be an integer"):
        rm.Qrels.from_tsv(grade)


def test_near_miss_formats_name_the_right_reader(tmp_path: Path) -> None:
    three = _write(tmp_path / "q.txt", "q1 d1 1\n")
    with pytest.raises(InputFormatError, match=r"read them with Qrels\.from_tsv"):
        rm.Qrels.from_trec(three)
    qrels_as_run = _write(tmp_path / "r.txt", "q1 0 d1 1\n")
    with pytest.raises(InputFormatError, match=r"Four fields are TREC qrels, not a run"):
        rm.Run.from_trec(qrels_as_run)
    with pytest.raises(InputFormatError, match=r"line 1: .*Three fields \(query_id doc_id score\)"):
        read_run(three)
    with pytest.raises(InputFormatError, match=r"use Qrels\.from_dict"):
        rm.Qrels({"q1": ["d1"]})  # type: ignore[dict-item]


def test_list_style_qrels(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.json", json.dumps({"q1": ["d1", "d2"], "q2": []}))
    assert rm.Qrels.from_json(path).to_dict() == {"q1": {"d1": 1, "d2": 1}, "q2": {}}
    assert rm.Qrels.from_dict({"q1": ["d1"]}).to_dict() == {"q1": {"d1": 1}}
    with pytest.raises(InputFormatError, match="Doc ids of query 'q1' must be strings"):
        rm.Qrels.from_dict({"q1": ["d1", 2]})  # type: ignore[list-item]


def _beir_folder(root: Path) -> Path:
    _write(
        root / "corpus.jsonl",
        '{"_id": "d1", "title": "Alpha", "text": "first"}\n{"_id": "d2", "text": "second"}\n',
    )
    _write(root / "queries.jsonl", '{"_id": "q1", "text": "which?"}\n{"_id": "q9", "text": "x"}\n')
    _write(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n")
    _write(root / "qrels" / "dev.tsv", "query-id\tcorpus-id\tscore\nq9\td2\t1\n")
    return root


def test_a_beir_folder(tmp_path: Path) -> None:
    root = _beir_folder(tmp_path / "scifact")
    data = rm.RetrievalDataset.from_beir(root)
    assert data.queries == {"q1": "which?"}  # only the judged queries, as BEIR's loader
    assert data.corpus == {"d1": "Alpha\nfirst", "d2": "second"}
    assert data.relevant_docs == {"q1": {"d1": 2, "d2": 0}}
    assert rm.RetrievalDataset.from_beir(root, "dev", with_titles=False).corpus["d1"] == "first"
    with pytest.raises(
        InputFormatError, match=r"train\.tsv is missing \(the splits there: dev, test\)"
    ):
        rm.RetrievalDataset.from_beir(root, "train")
    _write(root / "qrels" / "bad.tsv", "q7\td1\t1\n")
    with pytest.raises(InputFormatError, match=r"judges 1 queries that queries\.jsonl lacks"):
        rm.RetrievalDataset.from_beir(root, "bad")
    (root / "corpus.jsonl").unlink()
    with pytest.raises(InputFormatError, match=r"corpus\.jsonl is missing"):
        rm.RetrievalDataset.from_beir(root)


def test_latex_tables() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    result = rm.evaluate(qrels, {"q1": ["a"], "q2": ["x", "b"], "q3": ["c"]}, ["P@1", "mrr"])
    assert result.to_latex(caption="P & MRR", label="tab:one") == (
        "\\begin{table}[t]\n\\centering\n\\caption{P \\& MRR}\n\\label{tab:one}\n"
        "\\begin{tabular}{lrrr}\n\\toprule\nmetric & mean & queries & NA \\\\\n\\midrule\n"
        "P@1 & 0.6667 & 3 & 0 \\\\\nmrr & 0.8333 & 3 & 0 \\\\\n\\bottomrule\n"
        "\\end{tabular}\n\\end{table}\n"
    )
    runs = {
        "bm_25": {q: dict.fromkeys(docs, 1.0) for q, docs in qrels.items()},
        "weak": {q: {"z": 2.0, **dict.fromkeys(docs, 1.0)} for q, docs in qrels.items()},
    }
    comparison = rm.compare(qrels, runs, ["P@1"], baseline="bm_25", n_permutations=100)
    text = comparison.to_latex()
    assert "bm\\_25 (baseline) & \\textbf{1.0000} \\\\" in text
    assert "\\caption{$\\blacktriangle$ / $\\blacktriangledown$: significantly" in text


_TSV_ODD = [
    "header", "no header", "a comment first", "a blank line", "CR LF", "spaces", "a BOM",
    "a query apart", "judged twice alike", "judged twice apart", "four fields",
    "a real grade", "a header later", "a gzip file", "a broken gzip file", "no final newline",
]  # fmt: skip


@pytest.mark.parametrize("odd", _TSV_ODD)
def test_three_column_qrels_read_as_plain_trec_give_the_line_readers_answer(
    tmp_path: Path, odd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BEIR's qrels are read by the fast TREC reader (500,000 lines: 0.52 -> 0.07 s); every
    file gives the judgments, or the error naming the line, the line-by-line reader gives."""
    import gzip
    import random

    from ragmetrics.data import _qrels

    rng = random.Random(len(odd))
    rows = [
        (f"q{q}", f"d{rng.randrange(10**6)}", rng.randint(0, 3))
        for q in range(40)
        for _ in range(5)
    ]
    lines = [f"{q}\t{d}\t{g}" for q, d, g in rows]
    at = rng.randrange(1, len(lines) - 1)
    if odd != "no header":
        lines.insert(0, "query-id\tcorpus-id\tscore")
    if odd == "a comment first":
        lines.insert(0, "# BEIR")
    elif odd == "a blank line":
        lines.insert(at, "")
    elif odd == "spaces":
        lines[at] = lines[at].replace("\t", "  ")
    elif odd == "a query apart":
        lines.append(lines[3].replace("\td", "\tnew-d"))
    elif odd == "judged twice alike":
        lines.append(lines[at])
    elif odd == "judged twice apart":
        q, d, g = lines[at].split("\t")
        lines.append(f"{q}\t{d}\t{int(g) + 1}")
    elif odd == "four fields":
        lines[at] = lines[at].replace("\t", "\t0\t", 1)
    elif odd == "a real grade":
        lines[at] = lines[at].rsplit("\t", 1)[0] + "\t0.5"
    elif odd == "a header later":
        lines.insert(at, "query-id\tcorpus-id\tscore")
    text = ("\r\n" if odd == "CR LF" else "\n").join(lines)
    text += "" if odd == "no final newline" else "\n"
    data = ("\ufeff" if odd == "a BOM" else "").encode() + text.encode()
    path = tmp_path / "qrels.tsv"
    if odd == "a gzip file":
        data = gzip.compress(data)
    elif odd == "a broken gzip file":
        data = b"\x1f\x8b\x08\x00broken gzip"
    path.write_bytes(data)

    def read() -> object:
        try:
            return rm.Qrels.from_tsv(path).to_dict()
        except InputFormatError as error:
            return str(error)

    got = read()
    if odd in ("header", "no header", "a blank line", "CR LF", "spaces", "a gzip file"):
        assert isinstance(got, dict) and len(got) == 40
        from ragmetrics.formats import _io

        def line_by_line(*args: object) -> object:
            raise AssertionError("read line by line")

        with monkeypatch.context() as patched:  # the fast reader alone
            patched.setattr(_io, "trec_lines", line_by_line)
            assert read() == got
    monkeypatch.setattr(_qrels, "read_plain_trec_packed", lambda *args, **kwargs: None)
    assert got == read()
