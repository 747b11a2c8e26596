"""Chunk-to-original matching: the four rules, each option, and LoCoMo at full size."""

from __future__ import annotations

import json
import random

import pytest

import ragmetrics as rm
from ragmetrics import matching
from ragmetrics.matching import ChunkMatcher, MatchRules, is_chunk_from_original
from tests import _locomo
from tests.conftest import shared_file


@pytest.fixture(params=["masks", "lists"])
def layout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with each layout of the word index: bit masks (small corpora, the
    default here) and position lists (forced by lowering the size limit of masks)."""
    if request.param == "lists":
        monkeypatch.setattr(matching, "_MASKED_ORIGINALS", 0)
    return str(request.param)


def test_date_line_is_dropped() -> None:
    assert is_chunk_from_original("Date: 8 May 2023\nI moved to Paris", "so I moved to Paris.")
    assert not is_chunk_from_original("Date: 8 May 2023\nI moved to Paris", "I moved to Rome")


def test_role_prefix_keeps_the_whole_rest() -> None:
    original = "we said: yes, note: the rest"
    assert is_chunk_from_original("user: yes, note: the rest", original)
    assert is_chunk_from_original("assistant: yes, note: the rest", original)
    assert not is_chunk_from_original("system: yes, note: the rest", original)


def test_date_then_role() -> None:
    assert is_chunk_from_original(
        "Date: today\nassistant: hello there", "user: hi\nassistant: hello there"
    )


def test_json_escaped_match() -> None:
    original = json.dumps({"turns": [{"content": 'She said "hi"\nthen left — café'}]})
    assert is_chunk_from_original('user: She said "hi"\nthen left — café', original)
    assert not is_chunk_from_original(
        'She said "hi"\nthen left — café', original, rules=MatchRules(json_escaped=False)
    )


def test_empty_remainder_matches_nothing() -> None:
    assert not is_chunk_from_original("Date: 8 May 2023", "Date: 8 May 2023")
    assert not is_chunk_from_original("Date: 8 May 2023\n", "anything")
    assert not is_chunk_from_original("", "anything")
    assert not is_chunk_from_original("user: ", "user: ")


def test_metadata_lines_rule() -> None:
    chunk = "file_name: report.pdf\npage_label: 3\n\nRevenue grew by 4%."
    assert not is_chunk_from_original(chunk, "In 2023 Revenue grew by 4%.")
    assert is_chunk_from_original(
        chunk, "In 2023 Revenue grew by 4%.", rules=MatchRules.llama_index()
    )
    # a chunk without a metadata block is unchanged by the rule
    assert is_chunk_from_original("Revenue grew", "Revenue grew", rules=MatchRules.llama_index())


def test_speaker_names_rule() -> None:
    rules = MatchRules(speaker_names=("Caroline",))
    assert is_chunk_from_original(
        "Caroline: I went hiking", "Mel asked and I went hiking", rules=rules
    )
    assert not is_chunk_from_original("Caroline: I went hiking", "Mel asked and I went hiking")


def test_prefix_pattern_rule() -> None:
    rules = MatchRules(prefix_patterns=(r'\(.*?\) \w+ said, "',), strip=True)
    chunk = '(8 May 2023) Caroline said, "I went hiking'
    assert is_chunk_from_original(chunk, "Caroline: I went hiking today", rules=rules)


def test_whitespace_unicode_and_case_normalization() -> None:
    assert is_chunk_from_original(
        "a  b\n c", "x a b c y", rules=MatchRules(normalize_whitespace=True)
    )
    assert is_chunk_from_original("ﬁne", "fine", rules=MatchRules(unicode_form="NFKC"))
    assert is_chunk_from_original("HELLO", "hello", rules=MatchRules(case_sensitive=False))
    with pytest.raises(rm.RagMetricsError, match=r"unicode_form must be 'NFC'"):
        MatchRules(unicode_form="nfc")


def test_matcher_rejects_bad_input() -> None:
    with pytest.raises(
        rm.RagMetricsError,
        match=r"originals must be a mapping of id to text or a list of texts; got str",
    ):
        ChunkMatcher("one text")  # type: ignore[arg-type]
    with pytest.raises(rm.RagMetricsError, match=r"The original 'a' must be a string; got int"):
        ChunkMatcher({"a": 3})  # type: ignore[dict-item]


def test_short_chunks_and_lists(layout: str) -> None:
    matcher = ChunkMatcher(["alpha beta", "beta gamma"])
    assert matcher.match("beta") == {"0", "1"}  # shorter than the window: checked everywhere
    assert matcher.match("delta") == set()


@pytest.mark.parametrize("n_words", [3, 4, 13, 14, 40])
def test_chunks_cut_mid_word_at_both_ends_still_match(n_words: int, layout: str) -> None:
    words = [f"w{i}x" for i in range(60)]
    original = " ".join(words)
    chunk = " ".join(words[10 : 10 + n_words])[1:-1]  # first and last words cut
    matcher = ChunkMatcher({"s": original, "other": " ".join(reversed(words))})
    assert matcher.match(chunk) == {"s"}
    assert is_chunk_from_original(chunk, original)


def test_one_word_chunk_found_inside_words_of_the_originals(layout: str) -> None:
    # no whitespace: the vocabulary alone answers, including a piece from a word's middle
    matcher = ChunkMatcher({"a": "say Thanks!! now", "b": "no thanks", "c": "xThanks!y", "d": ""})
    assert matcher.match("Thanks!") == {"a", "c"}
    assert matcher.match("hanks") == {"a", "b", "c"}
    assert matcher.match("anks!! no") == {"a"}
    assert matcher.match("Thanks! now") == set()
    assert matcher.match(" now") == {"a"}  # leading whitespace: checked in full


@pytest.mark.parametrize("last", ["u", "up", "up!", "up!x"])
def test_common_words_narrowed_by_a_last_word_cut_short(last: str, layout: str) -> None:
    # every interior word is in every original: the last word (a word's start) narrows
    common = "it was so great and it was fun"
    originals = {f"s{i}": f"{common} keep {common} {tail}" for i, tail in enumerate(["up!", "on"])}
    originals.update({f"t{i}": f"{common} it {common}" for i in range(40)})
    matcher = ChunkMatcher(originals)
    chunk = f"eep {common} {last}"
    expected = {k for k, text in originals.items() if is_chunk_from_original(chunk, text)}
    assert matcher.match(chunk) == expected
    assert ("s0" in expected) == (last != "up!x")


def test_matcher_equals_pairwise_on_a_tiny_vocabulary(layout: str) -> None:
    # a vocabulary of eight words makes every word common: the narrowing paths do the work;
    # chunks are cut anywhere, including mid-word and at whitespace
    rng = random.Random(5)
    vocabulary = ["a", "ab", "abc", "b", "ba", "c!", "cab", "x"]
    originals = {
        f"o{i}": " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 60)))
        for i in range(80)
    }
    texts = list(originals.values())
    chunks = []
    for _ in range(1500):
        text = rng.choice(texts)
        start = rng.randrange(len(text) + 1)
        chunks.append(text[start : start + rng.randint(0, 40)])
    chunks += [
        " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 5))) for _ in range(300)
    ]
    matcher = ChunkMatcher(originals)
    expected = [{k for k, t in originals.items() if is_chunk_from_original(c, t)} for c in chunks]
    assert matcher.match_many(chunks) == expected


def test_index_layout_follows_the_corpus_size() -> None:
    # masks cost a bit per original for every word: past the limit, lists of positions
    limit = matching._MASKED_ORIGINALS
    for size, layout in ((limit, matching._MaskIndex), (limit + 1, matching._ListIndex)):
        originals = [f"session {i} said hello to w{i % 7} friends" for i in range(size)]
        matcher = ChunkMatcher(originals)
        assert type(matcher._index) is layout
        assert matcher.match("said hello to w3 fri") == {str(i) for i in range(3, size, 7)}
        assert matcher.match("n 12 said") == {"12"}
        assert matcher.match("12 said") == {str(i) for i in range(size) if str(i).endswith("12")}


def test_match_run_keeps_the_unmatched_chunks_place_and_counts_it() -> None:
    matcher = ChunkMatcher(
        {"s1": "user: one two three four five six", "s2": "assistant: seven eight nine ten"}
    )
    matched = matcher.match_run(
        {"q": ["user: four five six", "nothing like it", "assistant: eight nine", "user: one two"]}
    )
    # s1 at the place of its first chunk, the unmatched chunk at its own, s2 after it; the
    # second chunk of s1 is dropped (a document ranking, as ref_doc_id gives)
    assert matched.run["q"] == ("s1", "unmatched:2", "s2")
    assert matched.unmatched == {"q": 1} and matched.n_chunks == 4
    result = matched.evaluate({"q": {"s2": 1}}, ["mrr", "recall@2"])
    assert result.aggregate == {"mrr": 1 / 3, "recall@2": 0.0}
    assert result.counts.unmatched_chunks == 1
    assert "1 retrieved chunks matched no original" in result.to_markdown()


class _CountingRules(MatchRules):
    """Default rules that count how often a chunk is reduced (one per matching)."""

    calls: list[str]

    def variants(self, chunk: str) -> tuple[str, ...]:
        self.calls.append(chunk)
        return super().variants(chunk)


def test_a_chunk_repeated_across_queries_is_matched_once() -> None:
    rules = _CountingRules()
    object.__setattr__(rules, "calls", [])
    matcher = ChunkMatcher({"s1": "user: one two three four", "s2": "five six seven"}, rules=rules)
    shared, other = "user: two three four", "six seven"
    matched = matcher.match_run(
        {"q1": [shared, other, "gone"], "q2": [other, shared], "q3": ["gone", shared]}
    )
    assert sorted(rules.calls) == sorted([shared, other, "gone"])
    assert matched.run.to_lists() == {
        "q1": ["s1", "s2", "unmatched:3"],
        "q2": ["s2", "s1"],
        "q3": ["unmatched:1", "s1"],
    }
    assert matched.unmatched == {"q1": 1, "q3": 1} and matched.n_chunks == 7
    assert matched.chunk_matches["q2"] == [frozenset({"s2"}), frozenset({"s1"})]
    # answers handed out are the caller's own: changing one changes no other
    first = matcher.match_indices(shared)
    first.add(99)
    assert matcher.match_indices(shared) == {0}


@pytest.fixture(scope="module")
def locomo() -> _locomo.Locomo:
    return _locomo.load(shared_file("locomo", "locomo10.json"))


@pytest.fixture(scope="module")
def locomo_matcher(locomo: _locomo.Locomo) -> ChunkMatcher:
    return ChunkMatcher(locomo.originals, rules=MatchRules(speaker_names=locomo.speakers))


def test_locomo_every_turn_finds_its_session(
    locomo: _locomo.Locomo, locomo_matcher: ChunkMatcher
) -> None:
    assert len(locomo.originals) == 272 and len(locomo.turns) > 5000
    for turn in locomo.turns:
        found = locomo_matcher.match(_locomo.turn_chunk(turn, style="speaker"))
        assert locomo.original_id(turn.conversation, turn.session) in found, turn.dia_id


@pytest.mark.parametrize("lists", [False, True], ids=["masks", "lists"])
def test_locomo_matcher_equals_pairwise(
    locomo: _locomo.Locomo,
    locomo_matcher: ChunkMatcher,
    lists: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if lists:
        monkeypatch.setattr(matching, "_MASKED_ORIGINALS", 0)
        locomo_matcher = ChunkMatcher(locomo.originals, rules=locomo_matcher.rules)
    rng = random.Random(3)
    chunks = [_locomo.turn_chunk(t, style="speaker") for t in rng.sample(locomo.turns, 150)]
    sessions: dict[tuple[str, int], list[_locomo.Turn]] = {}
    for turn in locomo.turns:
        sessions.setdefault((turn.conversation, turn.session), []).append(turn)
    for turns in rng.sample(list(sessions.values()), 40):
        start = rng.randrange(len(turns))
        chunks.append(_locomo.window_chunk(turns[start : start + 3]))
    chunks += ["Date: 1:56 pm on 8 May, 2023", "Hey", "no such sentence appears anywhere in it"]
    for chunk in chunks:
        expected = {
            i
            for i, text in locomo.originals.items()
            if is_chunk_from_original(chunk, text, rules=locomo_matcher.rules)
        }
        assert locomo_matcher.match(chunk) == expected


def test_locomo_json_originals_and_role_chunks() -> None:
    data = _locomo.load(shared_file("locomo", "locomo10.json"), as_json=True)
    matcher = ChunkMatcher(data.originals)
    rng = random.Random(5)
    for turn in rng.sample(data.turns, 300):
        found = matcher.match(_locomo.turn_chunk(turn, style="role"))
        assert data.original_id(turn.conversation, turn.session) in found


def test_locomo_evidence_retrieval_scores_perfectly(
    locomo: _locomo.Locomo, locomo_matcher: ChunkMatcher
) -> None:
    by_id = {(t.conversation, t.dia_id): t for t in locomo.turns}
    samples = json.loads(shared_file("locomo", "locomo10.json").read_text())
    chunks: dict[str, list[str]] = {}
    for sample in samples:
        for position, qa in enumerate(sample["qa"]):
            turns = [by_id.get((sample["sample_id"], e)) for e in qa.get("evidence", [])]
            if turns and all(turns):
                chunks[f"{sample['sample_id']}:q{position}"] = [
                    _locomo.turn_chunk(t, style="speaker") for t in turns
                ]  # type: ignore[arg-type]
    gold = {q: dict.fromkeys(ids, 1) for q, ids in locomo.questions if q in chunks}
    matched = locomo_matcher.match_run(chunks)
    result = matched.evaluate(gold, ["recall_all@50", "recall@50"], missing="error")
    assert result.counts.queries > 1500
    assert result.aggregate["recall_all@50"] == pytest.approx(
        1.0
    )  # one question has 15 gold sessions
    assert matched.n_unmatched == 0


def test_a_chunk_matching_several_originals_takes_one_place_by_a_named_policy() -> None:
    generic = "assistant: Understood. Do you want a reminder about that later?"
    originals = {
        f"s{i}": f"user: topic {i} here\n{generic}\nuser: bye {i}" for i in range(1, 22)
    } | {"true": "user: my dentist is on Friday at nine\nassistant: Noted."}
    chunks = {"q": [generic, "user: my dentist is on Friday at nine", "user: topic 4 here"]}
    qrels = {"q": {"true": 1, "s4": 1}}
    with pytest.warns(
        rm.AmbiguousChunkWarning, match=r"1 of 3 matched chunks.*ambiguous='unjudged'"
    ):
        matched = ChunkMatcher(originals).match_run(chunks)
    assert matched.run["q"] == ("ambiguous:1", "true", "s4")  # one place, no credit
    assert matched.n_ambiguous == 1 and matched.ambiguous == {"q": 1}
    result = matched.evaluate(qrels, ["recall@2", "P@3"])
    assert result.aggregate == {"recall@2": 0.5, "P@3": 2 / 3}
    assert result.counts.ambiguous_chunks == 1
    with pytest.warns(rm.AmbiguousChunkWarning, match="first of its originals"):
        first = ChunkMatcher(originals, ambiguous="first").match_run(chunks)
    assert first.run["q"] == ("s1", "true", "s4")
    with pytest.warns(rm.AmbiguousChunkWarning, match="every original it matched"):
        every = ChunkMatcher(originals).match_run(chunks, ambiguous="all")
    assert every.run["q"][:3] == ("s1", "s2", "s3") and len(every.run["q"]) == 22
    with pytest.raises(rm.InvalidParameterError, match="ambiguous must be one of"):
        ChunkMatcher(originals, ambiguous="any")


def test_id_and_text_routes_agree_where_every_chunk_is_unambiguous() -> None:
    rng = random.Random(4)
    originals = {f"d{i}": " ".join(f"w{i}_{j}" for j in range(30)) for i in range(50)}
    chunk_of = {
        (d, k): " ".join(text.split()[k * 10 : k * 10 + 10])
        for d, text in originals.items()
        for k in range(3)
    }
    keys = list(chunk_of)
    ranked = {f"q{q}": rng.sample(keys, 12) for q in range(30)}
    qrels = {f"q{q}": {f"d{rng.randrange(50)}": 1 for _ in range(3)} for q in range(30)}
    by_text = ChunkMatcher(originals).match_run(
        {q: [chunk_of[k] for k in r] for q, r in ranked.items()}
    )
    by_id = rm.Run.from_lists({q: [d for d, _ in r] for q, r in ranked.items()})
    metrics = ["recall@5", "ndcg@10", "mrr"]
    assert by_text.n_ambiguous == 0
    assert (
        by_text.evaluate(qrels, metrics).per_query == rm.evaluate(qrels, by_id, metrics).per_query
    )
