"""Property-based checks of the input rules (docs/formats.md) over the whole Unicode range.

Ids, lines and whole files are generated with CR/LF, byte-order marks, NUL, Unicode
whitespace and separators, digits of other scripts, NaN and exponents. The properties:

- every writer round-trips an id exactly or refuses it with a ``RagMetricsError`` (TREC
  refuses exactly the ids its rule excludes; JSON and Parquet only lone surrogates);
- every TREC reader (in memory, through the vectorized or the careful path, streamed in
  batches of any size, plain or gzip) accepts and refuses the same files, and gives the same
  values; what they accept is what an independent reading of the rule gives;
- Parquet and Arrow give what the same rows give from Python dicts;
- every metric stays in its declared range, whatever the grades.

The profile is derandomized (the same examples on every run, so CI is deterministic) and sized
to take well under two minutes on two cores.
"""

from __future__ import annotations

import gzip
import math
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import ragmetrics as rm
from ragmetrics.formats import _packed
from ragmetrics.formats._io import read_trec_maps
from ragmetrics.formats._trec_fast import read_plain_trec_packed
from ragmetrics.metrics import registered

pyarrow = pytest.importorskip("pyarrow")

PROFILE = settings.get_profile("ragmetrics")  # registered in conftest.py

# characters that have broken readers before, and everything else Unicode has
ODD = [" ", "\t", "\r", "\n", "\x00", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85", "\xa0",
       "\u2028", "\u2029", "\u3000", "\ufeff", "\u200b", "#", "é", "٣", "１", "_", "\udc80"]  # fmt: skip
CHARS = st.one_of(
    st.sampled_from(ODD),
    st.characters(codec=None, exclude_categories=()),
    st.characters(min_codepoint=0x21, max_codepoint=0x7E),
)
IDS = st.text(CHARS, min_size=1, max_size=6)
PLAIN_IDS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=6)
SCORES = st.one_of(
    st.floats(allow_nan=False, width=64),
    st.integers(-(10**6), 10**6).map(float),
    st.sampled_from([0.5, 0.25, 1e-300, 1e300]),
)


def trec_writable(identifier: str) -> bool:
    """The rule, read from docs/formats.md independently of the library's code."""
    return bool(identifier) and all(c.isprintable() and c != " " for c in identifier)


def has_surrogate(identifier: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in identifier)


@contextmanager
def quiet() -> Iterator[None]:
    """Typed warnings (ids that never meet, a query left out) are not errors here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RagMetricsWarning)
        yield


# --- writers ---------------------------------------------------------------------------------


@PROFILE
@given(st.dictionaries(IDS, st.dictionaries(IDS, SCORES, min_size=1, max_size=4), max_size=4))
def test_every_writer_round_trips_an_id_or_refuses_it(results: dict[str, dict[str, float]]) -> None:
    if not results:
        return
    try:
        run = rm.Run.from_dict(results)
    except rm.RagMetricsError:
        pytest.fail("a dict of non-empty string ids and real scores must be read")
    ids = [*results, *(d for docs in results.values() for d in docs)]
    with tempfile.TemporaryDirectory() as folder:
        for writer, reader, refuses in (
            (run.to_trec, rm.Run.from_trec, not all(map(trec_writable, ids))),
            (run.to_json, rm.Run.from_json, any(map(has_surrogate, ids))),
            (run.to_parquet, rm.Run.from_parquet, any(map(has_surrogate, ids))),
        ):
            target = Path(folder) / "out"
            try:
                writer(target)
            except rm.RagMetricsError:
                assert refuses, f"{writer.__name__} refused ids it can write"
                assert not target.exists()  # refused before a byte was written
                continue
            assert not refuses, f"{writer.__name__} wrote ids it cannot hold"
            back = reader(target)
            assert back.to_dict() == run.to_dict()
            assert [back[q] for q in run.query_ids] == [run[q] for q in run.query_ids]
            target.unlink()


# --- TREC files: every reader, one rule ------------------------------------------------------

SEPARATORS = st.sampled_from([" ", "\t", "  ", " \t ", "\xa0", "\x0b", "\x1c", "\u3000"])
ENDINGS = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\x0c", "\x85", "\u2028"])
NUMBERS = st.one_of(
    SCORES.map(repr),
    SCORES.map(lambda x: f"{x:.6f}" if math.isfinite(x) else repr(x)),
    st.sampled_from(
        ["1_000", "١٢", "１２", "nan", "-NaN", "inf", "-inf", "1e5", "+3", "0x10", "."]
    ),
)


@st.composite
def trec_runs(draw: Any) -> tuple[bytes, bool]:
    """A run file grouped by query: plain lines, and in about half the files one thing that
    is odd (a separator, a line end, a number, an id, a byte-order mark), legal or not; and
    whether anything odd was put in."""
    queries = draw(st.lists(PLAIN_IDS, min_size=1, max_size=4, unique=True))
    rows = []
    for query in queries:
        for _ in range(draw(st.integers(1, 4))):
            score = draw(SCORES)
            fields = [query, "Q0", draw(PLAIN_IDS), str(draw(st.integers(1, 9))), repr(score), "t"]
            rows.append([fields, [" "] * 5, "\n"])
    odd = draw(st.booleans())
    prefix = "\ufeff" if draw(st.booleans()) else ""  # at the very start: dropped
    if odd:
        fields, seps, _ = rows[draw(st.integers(0, len(rows) - 1))]
        kind = draw(st.sampled_from(["separator", "ending", "number", "id", "bom", "blank"]))
        if kind == "separator":
            seps[draw(st.integers(0, 4))] = draw(SEPARATORS)
        elif kind == "ending":
            rows[draw(st.integers(0, len(rows) - 1))][2] = draw(ENDINGS)
        elif kind == "number":
            fields[4] = draw(NUMBERS)
        elif kind == "id":
            fields[2] = draw(IDS)
        elif kind == "bom":
            fields[draw(st.integers(0, 5))] = "\ufeff" + fields[0]
        else:
            rows.insert(draw(st.integers(0, len(rows))), [["#", "comment"], [" "], "\n"])
    lines = [f[0] + "".join(s + x for s, x in zip(seps, f[1:], strict=False)) + end
             for f, seps, end in rows]  # fmt: skip
    if draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\n")  # no line end at the end of the file
    text = prefix + "".join(lines)
    return text.encode("utf-8", "surrogatepass"), odd


def reference(data: bytes) -> dict[str, dict[str, float]] | None:
    """The rule of docs/formats.md, written out plainly: the run it describes, or None when
    the file must be refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    run: dict[str, dict[str, float]] = {}
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for line in lines:
        line = line.removesuffix("\r")
        if any(not (c.isprintable() or c == "\t") for c in line):
            return None
        fields = line.replace("\t", " ").split(" ")
        fields = [f for f in fields if f]
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 6:
            return None
        token = fields[4]
        if not token.isascii() or "_" in token:
            return None
        try:
            score = float(token)
        except ValueError:
            return None
        if score != score:
            return None
        docs = run.setdefault(fields[0], {})
        docs[fields[2]] = max(score, docs.get(fields[2], -math.inf))
    return run


def _outcomes(data: bytes) -> list[object]:
    """What each reader makes of the file: its run as a dict, or "refused"."""
    outcomes: list[object] = []
    with tempfile.TemporaryDirectory() as folder:
        plain, packed = Path(folder) / "run.txt", Path(folder) / "run.gz"
        plain.write_bytes(data)
        packed.write_bytes(gzip.compress(data))
        qrels = rm.Qrels.from_dict({"q": {"x": 1}})
        for path in (plain, packed):
            try:
                outcomes.append(rm.Run.from_trec(path).to_dict())
            except rm.InputFormatError:
                outcomes.append("refused")
            for batch_rows in (1, 10**6):
                try:
                    with quiet():
                        result = rm.evaluate_stream(
                            qrels, path, ["P@1"], batch_rows=batch_rows, progress=False
                        )
                    outcomes.append(("streamed", result.counts.in_run))
                except rm.InputFormatError:
                    outcomes.append("refused")
                except rm.RagMetricsError as error:  # a file of comments: an empty run
                    outcomes.append(("streamed", 0) if "run is empty" in str(error) else error)
        try:
            maps, _ = read_trec_maps(
                plain, n_columns=6, doc_col=2, value_col=4, value_kind="float",
                layout="run", extra_fields=True,
            )  # fmt: skip
            outcomes.append(maps)
        except rm.InputFormatError:
            outcomes.append("refused")
        fast = read_plain_trec_packed(plain, n_columns=6, doc_col=2, value_col=4, integer=False)
        outcomes.append(fast)
    return outcomes


@settings(PROFILE, max_examples=400)
@given(trec_runs())
def test_every_trec_reader_accepts_and_refuses_the_same_files(case: tuple[bytes, bool]) -> None:
    data, _ = case
    expected = reference(data)
    (
        from_memory,
        stream_plain_1,
        stream_plain_n,
        from_gzip,
        stream_gz_1,
        stream_gz_n,
        careful,
        fast,
    ) = _outcomes(data)
    event("refused" if expected is None else "read")
    if expected is None:
        assert [from_memory, from_gzip, careful] == ["refused"] * 3
        assert [stream_plain_1, stream_plain_n, stream_gz_1, stream_gz_n] == ["refused"] * 4
        assert fast is None
        return
    assert from_memory == from_gzip == careful == expected
    if fast is not None:  # the vectorized reader took the whole file: the same rows
        event("vectorized")
        queries, lengths, ids, scores = fast
        docs = iter(zip(_packed.decode(ids), scores.tolist(), strict=True))
        rows: dict[str, dict[str, float]] = {}
        for query, n in zip(queries, lengths, strict=True):
            best = rows.setdefault(query, {})
            for doc, score in islice(docs, n):  # a repeated doc keeps its best score
                best[doc] = max(score, best.get(doc, -math.inf))
        assert rows == expected
    streamed = ("streamed", len(expected))
    assert [stream_plain_1, stream_plain_n, stream_gz_1, stream_gz_n] == [streamed] * 4


# --- Parquet and Arrow -------------------------------------------------------------------------


@PROFILE
@given(
    st.lists(
        st.tuples(
            st.text(CHARS.filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF), min_size=1, max_size=5),
            st.text(CHARS.filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF), min_size=1, max_size=5),
            SCORES,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_parquet_and_arrow_give_what_dicts_give(rows: list[tuple[str, str, float]]) -> None:
    rows = sorted(rows, key=lambda r: r[0])  # grouped by query, as a stream needs
    as_dict: dict[str, dict[str, float]] = {}
    for query, doc, score in rows:
        docs = as_dict.setdefault(query, {})
        docs[doc] = max(score, docs.get(doc, -math.inf))
    table = pyarrow.table(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "score": [r[2] for r in rows],
        }
    )
    from_arrow = rm.Run.from_arrow(table)
    assert from_arrow.to_dict() == rm.Run.from_dict(as_dict).to_dict()
    qrels = {q: {docs_[0]: 1} for q, docs_ in ((q, list(d)) for q, d in as_dict.items())}
    metrics = ["P@1", "mrr", "ndcg@3"]
    with quiet():
        expected = rm.evaluate(qrels, as_dict, metrics).per_query
        assert rm.evaluate(qrels, from_arrow, metrics).per_query == expected
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "run.parquet"
            pyarrow.parquet.write_table(table, path)
            assert rm.Run.from_parquet(path).to_dict() == from_arrow.to_dict()
            streamed = rm.evaluate_stream(qrels, path, metrics, per_query=True, progress=False)
            assert streamed.per_query == expected


# --- ranges ------------------------------------------------------------------------------------

SPECS = sorted(registered().values(), key=lambda s: s.name)


@settings(PROFILE, max_examples=60)
@given(
    st.dictionaries(
        PLAIN_IDS,
        st.dictionaries(PLAIN_IDS, st.integers(-3, 2000), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    ),
    st.dictionaries(PLAIN_IDS, st.lists(PLAIN_IDS, max_size=8), min_size=1, max_size=5),
)
def test_every_metric_stays_in_its_declared_range(
    qrels: dict[str, dict[str, int]], run: dict[str, list[str]]
) -> None:
    classic = [s for s in SPECS if s.family != "set"]
    names = [s.name if s.cutoff.name == "NONE" else f"{s.name}@3" for s in classic]
    names += ["ndcg_exp@5", "err@5"]
    with quiet():
        try:
            result = rm.evaluate(qrels, run, names)
        except rm.RagMetricsError:
            return  # no shared query, an empty run: refused by name, not a number
    values = result.values[~np.isnan(result.values)]
    assert np.isfinite(values).all()
    for spec, column in zip([*classic, None, None], result.values.T, strict=True):
        finite = column[~np.isnan(column)]
        if spec is None or not spec.can_be_negative:
            assert (finite >= 0).all()
        if spec is None or spec.unit_range:
            assert (finite <= 1).all()
