"""Map retrieved chunks back to the original documents they came from.

The rules (``docs/metrics.md``, "Matching"): drop a leading ``Date: ...`` line, take what follows a
``user: `` / ``assistant: `` role prefix, then test containment in the original as it is or
JSON-escaped (as ``json.dumps`` writes it, without the quotes). An empty remainder matches
nothing. :class:`MatchRules` holds these rules as data, with options for other prefixes.

:class:`ChunkMatcher` answers the same question for many originals at once without scanning
each of them. It indexes the whitespace-delimited words of every original. A word strictly
inside the searched text (not its first or last, which may be cut mid-word) is a whole word of
every original that contains the text, so the originals holding the text's rarest interior
word are a complete candidate set, and so are the originals holding all its interior words;
each candidate is then verified with the exact containment test, so the answers are those of
:func:`is_chunk_from_original`. For a corpus of up to a few thousand originals the index keeps,
per word, a bit mask of its originals, so intersecting a dozen words costs a dozen ANDs; a
larger corpus keeps lists of positions and intersects from the rarest word.

Short generic texts ("Thanks!", "Wow! What did you get?") have no rare interior word. For
them the last word helps: it starts where a word of the original starts, so it is a prefix
of some word of the original, and the vocabulary sorted gives every such word in a bisect.
A text with no whitespace at all occurs in an original exactly when it occurs inside one of
its words, so its owners come from a scan of the vocabulary alone, with nothing to verify.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, reduce
from itertools import accumulate, chain, islice, repeat
from operator import and_, itemgetter, or_
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ragmetrics._util.progress import progress_bar
from ragmetrics._util.warn import warn
from ragmetrics.data._run import Run
from ragmetrics.errors import AmbiguousChunkWarning, InvalidParameterError, RagMetricsError

if TYPE_CHECKING:
    from ragmetrics.data._qrels import Qrels
    from ragmetrics.engine._result import EvaluationResult

__all__ = [
    "AMBIGUOUS_POLICIES",
    "DEFAULT_RULES",
    "ChunkMatcher",
    "MatchRules",
    "MatchedRun",
    "check_policy",
    "is_chunk_from_original",
]

_FEW_CANDIDATES = 2  # verified one by one; more are first narrowed by the other words
_MANY_CANDIDATES = 16  # beyond this, every anchor word narrows the candidates
_MASKED_ORIGINALS = 2048  # up to this many originals, the word index holds bit masks
_ANCHOR_WORDS = 12  # interior words looked up per searched text
_WINDOW_CHARS = 100  # a longer text is split only in a window around its middle
_AFFIX_WORDS = 64  # a last word that starts more words than this does not narrow
_LAST_CHARACTER = chr(0x10FFFF)  # sorts after every other character
_METADATA_LINE = re.compile(r"[^\s:][^:\n]{0,63}: [^\n]*")


@dataclass(frozen=True)
class MatchRules:
    """How a chunk is reduced to the text searched for in an original.

    Attributes:
        drop_line_prefixes: a chunk starting with one of these loses its first line
            (default ``("Date: ",)``).
        role_prefixes: a remainder starting with one of these is replaced by what follows
            its first ``": "`` (default ``("user: ", "assistant: ")``).
        speaker_names: extra ``Name: `` prefixes to strip the same way (e.g. LoCoMo speakers).
        prefix_patterns: regular expressions; the first one that matches at the start of the
            remainder is cut off (e.g. ``r"\\(.*?\\) \\w+ said, "`` for quoted turns).
        metadata_lines: strip the leading block of ``key: value`` lines and the blank line
            after it, as LlamaIndex writes when content is taken with metadata.
        strip: strip surrounding whitespace from the remainder.
        normalize_whitespace: collapse runs of whitespace to one space, in chunk and original.
        unicode_form: ``"NFC"`` or ``"NFKC"`` to normalize chunk and original, or None.
        case_sensitive: compare case-sensitively (default True).
        json_escaped: also accept the JSON-escaped remainder (default True).
    """

    drop_line_prefixes: tuple[str, ...] = ("Date: ",)
    role_prefixes: tuple[str, ...] = ("user: ", "assistant: ")
    speaker_names: tuple[str, ...] = ()
    prefix_patterns: tuple[str, ...] = ()
    metadata_lines: bool = False
    strip: bool = False
    normalize_whitespace: bool = False
    unicode_form: str | None = None
    case_sensitive: bool = True
    json_escaped: bool = True
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _roles: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _normalizing: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.unicode_form not in (None, "NFC", "NFKC", "NFD", "NFKD"):
            raise RagMetricsError(
                "unicode_form must be 'NFC', 'NFKC', 'NFD', 'NFKD' or None; "
                f"got {self.unicode_form!r}."
            )
        object.__setattr__(self, "_compiled", tuple(re.compile(p) for p in self.prefix_patterns))
        speakers = tuple(f"{name}: " for name in self.speaker_names)
        object.__setattr__(self, "_roles", self.role_prefixes + speakers)
        normalizing = bool(
            self.unicode_form or self.normalize_whitespace or not self.case_sensitive
        )
        object.__setattr__(self, "_normalizing", normalizing)

    @classmethod
    def llama_index(cls, **overrides: Any) -> MatchRules:
        """Defaults plus the metadata lines LlamaIndex prepends (``MetadataMode.ALL/LLM``)."""
        return replace(cls(metadata_lines=True), **overrides)

    def chunk_text(self, chunk: str) -> str:
        """The text of ``chunk`` that is searched for in an original (may be empty)."""
        text = chunk
        if text.startswith(self.drop_line_prefixes):
            newline = text.find("\n")
            text = "" if newline < 0 else text[newline + 1 :]
        if self.metadata_lines:
            text = _strip_metadata(text)
        if self._roles and text.startswith(self._roles):
            text = text[text.find(": ") + 2 :]
        for pattern in self._compiled:
            match = pattern.match(text)
            if match:
                text = text[match.end() :]
                break
        if self.strip:
            text = text.strip()
        return self.normalize(text) if self._normalizing else text

    def normalize(self, text: str) -> str:
        """The normalization applied to both sides (Unicode form, whitespace, case)."""
        if self.unicode_form:
            text = unicodedata.normalize(self.unicode_form, text)  # type: ignore[arg-type]
        if self.normalize_whitespace:
            text = " ".join(text.split())
        if not self.case_sensitive:
            text = text.casefold()
        return text

    def variants(self, chunk: str) -> tuple[str, ...]:
        """The strings whose containment means a match: the text, and its JSON escape."""
        text = self.chunk_text(chunk)
        if not text:
            return ()
        if not self.json_escaped or (
            text.isascii() and text.isprintable() and '"' not in text and "\\" not in text
        ):
            return (text,)  # JSON would write it unchanged
        escaped = json.dumps(text)[1:-1]
        return (text,) if escaped == text else (text, escaped)


DEFAULT_RULES = MatchRules()


def _strip_metadata(text: str) -> str:
    lines = text.split("\n")
    position = 0
    while position < len(lines) and _METADATA_LINE.fullmatch(lines[position]):
        position += 1
    if position == 0 or position >= len(lines) or lines[position].strip():
        return text  # no metadata block followed by a blank line
    return "\n".join(lines[position + 1 :])


def _interior_words(text: str) -> list[str]:
    """Up to ``_ANCHOR_WORDS`` whole words from the middle of ``text``, never its first or
    last word (either may be cut mid-word). Every original containing ``text`` contains each
    of them as a whole word, which is what makes the word index complete."""
    if len(text) > _WINDOW_CHARS:
        # tokens strictly inside a window are whole words strictly inside the text
        start = (len(text) - _WINDOW_CHARS) // 2
        words = text[start : start + _WINDOW_CHARS].split()[1:-1]
        if words:
            return words[:_ANCHOR_WORDS]
    words = text.split()
    start = max(1, (len(words) - _ANCHOR_WORDS) // 2)
    return words[start : min(len(words) - 1, start + _ANCHOR_WORDS)]


def is_chunk_from_original(chunk: str, original: str, *, rules: MatchRules = DEFAULT_RULES) -> bool:
    """True when ``chunk`` (after the prefix rules) occurs in ``original``, raw or JSON-escaped.

    Example:
        >>> is_chunk_from_original("Date: 1 May\\nuser: I moved to Paris", "...I moved to Paris...")
        True
        >>> is_chunk_from_original("Date: 1 May", "Date: 1 May")  # nothing left to look for
        False
    """
    if not isinstance(chunk, str) or not isinstance(original, str):
        raise RagMetricsError(
            f"chunk and original must be strings; got {type(chunk).__name__} and "
            f"{type(original).__name__}."
        )
    _check_rules(rules)
    target = rules.normalize(original) if _normalizes(rules) else original
    return any(variant in target for variant in rules.variants(chunk))


def _check_rules(rules: object) -> None:
    if not isinstance(rules, MatchRules):
        raise RagMetricsError(
            f"rules must be a MatchRules (ragmetrics.matching.MatchRules(...)); got "
            f"{type(rules).__name__}."
        )


def _normalizes(rules: MatchRules) -> bool:
    return rules._normalizing


@dataclass(frozen=True)
class MatchedRun:
    """Chunk rankings mapped onto original ids.

    Attributes:
        run: a :class:`Run` over original ids; each original keeps the place of its first
            chunk, and each unmatched chunk keeps its place as ``unmatched:<rank>``.
        chunk_matches: per query, the set of original ids of each chunk, in rank order.
        unmatched: per query, how many chunks matched no original (only queries with some).
        n_chunks: how many chunks were matched in all.
    """

    run: Run
    chunk_matches: dict[str, list[frozenset[str]]]
    unmatched: dict[str, int]
    n_chunks: int
    ambiguous: dict[str, int] = field(default_factory=dict)

    @property
    def n_unmatched(self) -> int:
        return sum(self.unmatched.values())

    @property
    def n_ambiguous(self) -> int:
        """Chunks that matched more than one original (placed by the ``ambiguous`` policy)."""
        return sum(self.ambiguous.values())

    def evaluate(
        self,
        qrels: Qrels | Mapping[str, Mapping[str, int]],
        metrics: str | Sequence[str],
        **options: Any,
    ) -> EvaluationResult:
        """``evaluate(qrels, self.run, metrics, **options)``, with the unmatched and ambiguous
        chunks counted."""
        from ragmetrics.engine._evaluation import evaluate

        result = evaluate(qrels, self.run, metrics, **options)
        counts = replace(
            result.counts, unmatched_chunks=self.n_unmatched, ambiguous_chunks=self.n_ambiguous
        )
        return result.replace(counts=counts)


class ChunkMatcher:
    """An index over original documents that maps a chunk to the originals it came from.

    Args:
        originals: a mapping of id to text, or a sequence of texts (ids ``"0"``, ``"1"``, ...).
        rules: the :class:`MatchRules` (default: the four rules of ``docs/metrics.md``).
        ambiguous: where a chunk that matches several originals goes in a ranking:
            ``"unjudged"``, ``"first"`` or ``"all"`` (see :meth:`match_run`).

    Example:
        >>> matcher = ChunkMatcher({"s1": "user: hi there", "s2": "assistant: hello you"})
        >>> sorted(matcher.match("Date: today\\nassistant: hello"))
        ['s2']
    """

    def __init__(
        self,
        originals: Mapping[str, str] | Sequence[str],
        *,
        rules: MatchRules = DEFAULT_RULES,
        ambiguous: str = "unjudged",
    ) -> None:
        self.ambiguous = check_policy(ambiguous)
        _check_rules(rules)
        if isinstance(originals, Mapping):
            items = [(str(k), v) for k, v in originals.items()]
        elif isinstance(originals, Sequence) and not isinstance(originals, str):
            items = [(str(i), v) for i, v in enumerate(originals)]
        else:
            raise RagMetricsError(
                "originals must be a mapping of id to text or a list of texts; "
                f"got {type(originals).__name__}."
            )
        for key, text in items:
            if not isinstance(text, str):
                raise RagMetricsError(
                    f"The original {key!r} must be a string; got {type(text).__name__}."
                )
        self.rules = rules
        self.ids = tuple(k for k, _ in items)
        normalize = _normalizes(rules)
        self._texts = tuple(rules.normalize(t) if normalize else t for _, t in items)
        index = _MaskIndex if len(self._texts) <= _MASKED_ORIGINALS else _ListIndex
        self._index: _WordIndex[Any] = index(self._texts)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"ChunkMatcher({len(self)} originals, {len(self._index.owners)} distinct words)"

    @cached_property
    def _affixes(self) -> _Affixes:
        return _Affixes(self._index.owners)

    def _verified(self, variant: str) -> Iterable[int]:
        """The originals that contain ``variant``."""
        index = self._index
        interior = _interior_words(variant)
        if interior:
            # the originals holding every interior word are a complete candidate set
            candidates = index.sharing(interior)
            if index.count(candidates) > _MANY_CANDIDATES:  # only common words
                candidates = self._narrowed(variant, candidates)
        elif variant.split() == [variant]:
            # no whitespace at all: it is in an original exactly when inside one of its words
            return index.positions(index.any_of(self._affixes.containing(variant)))
        else:
            # no interior word to anchor on: the last word narrows
            candidates = self._narrowed(variant, index.everything)
        texts = self._texts
        found = index.positions(candidates)
        if len(found) == 1:  # the usual case, without a comprehension's frame
            (only,) = found
            return found if variant in texts[only] else ()
        return [p for p in found if variant in texts[p]]

    def _narrowed(self, variant: str, candidates: Any) -> Any:
        """``candidates`` narrowed to the originals with a word that starts with the last
        word of ``variant`` (when it has two words or more: only then does that word start
        where a word of the original starts), unless too many words start with it."""
        words = variant.split()
        if len(words) < 2:
            return candidates
        starting = self._affixes.starting_with(words[-1])
        if starting is None:
            return candidates
        index = self._index
        return index.both(candidates, index.any_of(starting))

    def match_indices(self, chunk: str) -> set[int]:
        """Positions (in ``ids``) of the originals that ``chunk`` came from."""
        return set(self._match_positions([chunk])[0])

    def _match_positions(self, chunks: Iterable[str]) -> list[frozenset[int]]:
        """``match_indices`` of each chunk, in one loop with its lookups bound once.

        Each distinct chunk text is matched once: a retriever hands the same chunk to many
        queries, and a run of them repeats it all the time.
        """
        variants_of, verified = self.rules.variants, self._verified
        known: dict[str, frozenset[int]] = {}
        matched: list[frozenset[int]] = []
        for chunk in chunks:
            found = known.get(chunk)
            if found is None:
                variants = variants_of(chunk)
                found = known[chunk] = frozenset(
                    verified(variants[0])  # the usual case: one variant
                    if len(variants) == 1
                    else chain.from_iterable(map(verified, variants))
                )
            matched.append(found)
        return matched

    def match(self, chunk: str) -> set[str]:
        """Ids of the originals that ``chunk`` came from (empty when none)."""
        return self.match_many([chunk])[0]

    def match_many(self, chunks: Iterable[str]) -> list[set[str]]:
        """``match`` for each chunk, in order."""
        name_of = self.ids.__getitem__
        return [set(map(name_of, found)) for found in self._match_positions(chunks)]

    def match_run(
        self,
        chunks: Mapping[str, Sequence[str]],
        *,
        name: str | None = None,
        progress: bool | None = None,
        ambiguous: str | None = None,
    ) -> MatchedRun:
        """Map ranked chunk texts per query onto a :class:`Run` over original ids.

        The ranking is of documents: each original takes the place of the first chunk that
        matched it, and later chunks of the same original are dropped, as a ranking of
        ``ref_doc_id`` would drop them. A chunk that matches no original keeps its place as
        an unjudged doc (``unmatched:<rank>``, its rank among the query's chunks) and is
        counted: dropping it would move every document after it up a rank.

        A chunk that matches several originals (generic text, a turn repeated across
        sessions) says nothing certain about its source; it is counted (``ambiguous``) and
        placed by the policy ``ambiguous``, so that one chunk never takes more than one place
        and ``@k`` keeps meaning the first k chunks retrieved:

        - ``"unjudged"`` (the default, unless the matcher was made with another): it keeps
          its place as an unjudged doc
          (``ambiguous:<rank>``): no credit for a guess.
        - ``"first"``: its place goes to the first of its originals (in the matcher's order)
          not placed yet, or it is dropped like any later chunk of a placed original.
        - ``"all"``: every original it matched, in the matcher's order, each taking a place
          (before 0.4 the only behaviour; one generic chunk can then fill the whole top k).

        A :class:`~ragmetrics.AmbiguousChunkWarning` is given when more than 5% of the
        matched chunks are ambiguous.

        Example:
            >>> matcher = ChunkMatcher({"d1": "alpha beta gamma", "d2": "delta epsilon"})
            >>> matched = matcher.match_run({"q": ["beta gamma", "zeta", "alpha", "delta"]})
            >>> matched.run["q"], matched.n_unmatched
            (('d1', 'unmatched:2', 'd2'), 1)
        """
        ambiguous = check_policy(self.ambiguous if ambiguous is None else ambiguous)
        for query_id, texts in chunks.items():
            if isinstance(texts, str):
                raise RagMetricsError(
                    f"The chunks of query {query_id!r} must be a list of texts, not one string."
                )
        total = sum(map(len, chunks.values()))
        show = progress if progress is not None else total > 20_000
        flat = progress_bar(
            chain.from_iterable(chunks.values()), total=total, desc="matching chunks",
            disable=not show,
        )  # fmt: skip
        found = iter(self._match_positions(flat))
        names = self.ids
        named: dict[frozenset[int], frozenset[str]] = {}
        rankings: dict[str, list[str]] = {}
        per_chunk: dict[str, list[frozenset[str]]] = {}
        unmatched: dict[str, int] = {}
        several: dict[str, int] = {}
        for query_id, texts in chunks.items():
            ranking: dict[str, None] = {}
            matches: list[frozenset[str]] = []
            n_several = 0
            for rank, positions in enumerate(islice(found, len(texts)), start=1):
                ids = named.get(positions)
                if ids is None:
                    ids = named[positions] = frozenset(names[i] for i in positions)
                matches.append(ids)
                if len(positions) == 1:
                    ranking.update(dict.fromkeys(ids))
                elif not positions:
                    ranking[self._unmatched_id(rank)] = None
                else:
                    n_several += 1
                    self._place_ambiguous(ranking, sorted(positions), rank, ambiguous)
            rankings[query_id] = list(ranking)
            per_chunk[query_id] = matches
            missed = matches.count(frozenset())
            if missed:
                unmatched[query_id] = missed
            if n_several:
                several[query_id] = n_several
        n_several = sum(several.values())
        n_matched = total - sum(unmatched.values())
        if n_several and n_several > 0.05 * n_matched:
            example = next(iter(several))
            warn(
                f"{n_several} of {n_matched} matched chunks match more than one original "
                f"(e.g. in query {example!r}); under ambiguous={ambiguous!r} "
                + _POLICY_WORDS[ambiguous]
                + ". They are counted in counts.ambiguous_chunks; chunks that quote more of "
                "their source, or ids instead of texts, remove the doubt.",
                AmbiguousChunkWarning,
            )
        run = Run.from_lists(rankings, name=name)
        return MatchedRun(run, per_chunk, unmatched, total, several)

    def _place_ambiguous(
        self, ranking: dict[str, None], positions: list[int], rank: int, policy: str
    ) -> None:
        """Place a chunk that matched several originals (see :meth:`match_run`)."""
        names = self.ids
        if policy == "unjudged":
            ranking[self._unmatched_id(rank, "ambiguous")] = None
        elif policy == "first":
            fresh = next((names[i] for i in positions if names[i] not in ranking), None)
            if fresh is not None:
                ranking[fresh] = None
        else:
            ranking.update(dict.fromkeys(names[i] for i in positions))

    def rank_documents(self, chunks: Sequence[str]) -> tuple[list[str], int]:
        """One query's ranked chunks as ranked original ids (see :meth:`match_run`), and
        how many chunks matched no original."""
        with warnings.catch_warnings():  # one query: the caller counts ambiguity over many
            warnings.simplefilter("ignore", AmbiguousChunkWarning)
            matched = self.match_run({"q": chunks}, progress=False)
        return list(matched.run["q"]), matched.n_unmatched

    def _unmatched_id(self, rank: int, kind: str = "unmatched") -> str:
        """The id an unmatched (or ambiguous) chunk ranks under: unlike every original's."""
        name = f"{kind}:{rank}"
        while name in self._id_set:
            name = "_" + name
        return name

    @cached_property
    def _id_set(self) -> frozenset[str]:
        return frozenset(self.ids)


AMBIGUOUS_POLICIES = ("unjudged", "first", "all")


def check_policy(policy: object) -> str:
    """``policy`` if it is one of :data:`AMBIGUOUS_POLICIES`, else a clear error."""
    if policy not in AMBIGUOUS_POLICIES:
        raise InvalidParameterError(
            f"ambiguous must be one of {', '.join(map(repr, AMBIGUOUS_POLICIES))}; got {policy!r}."
        )
    return str(policy)


_POLICY_WORDS = {
    "unjudged": "each keeps its place as an unjudged doc (no credit for a guess)",
    "first": "each place goes to the first of its originals not placed yet",
    "all": "each puts every original it matched in the ranking, one place each",
}


class _Affixes:
    """The vocabulary of a :class:`ChunkMatcher`, arranged to find the words that start with
    or contain a given string (each arrangement is made on first use)."""

    def __init__(self, words: Iterable[str]) -> None:
        self._words = words

    @cached_property
    def _sorted(self) -> list[str]:
        return sorted(self._words)

    @cached_property
    def _joined(self) -> tuple[str, list[str], list[int]]:
        """Every word once, newline-separated (a newline is inside no word), with the
        words and where each starts."""
        words = list(self._words)
        starts = list(accumulate((len(word) + 1 for word in words), initial=0))
        return "\n".join(words), words, starts

    def starting_with(self, start: str) -> list[str] | None:
        """The words that start with ``start``; None when there are too many to help."""
        words = self._sorted
        first = bisect_left(words, start)
        found = words[first : first + _AFFIX_WORDS + 1]
        if found and found[-1].startswith(start):  # the range reaches past the slice's end
            return None if len(found) > _AFFIX_WORDS else found
        end = bisect_left(found, start + _LAST_CHARACTER)
        while end < len(found) and found[end].startswith(start):
            end += 1  # a word that goes on with the last character itself
        return found[:end]

    def containing(self, piece: str) -> list[str]:
        """The words that contain ``piece`` (which holds no whitespace)."""
        joined, words, starts = self._joined
        found: list[str] = []
        at = joined.find(piece)
        while at >= 0:
            word = bisect_right(starts, at) - 1
            found.append(words[word])
            at = joined.find(piece, starts[word + 1])
        return found


_Candidates = TypeVar("_Candidates")


class _WordIndex(ABC, Generic[_Candidates]):
    """Which originals hold each whitespace-delimited word, and set operations over the
    candidate sets it gives. Two layouts: bit masks for a corpus of a few thousand
    originals (one AND per word), lists of positions beyond (a mask costs a bit per
    original, so its size grows with the corpus)."""

    owners: Mapping[str, object]  # word -> the originals holding it
    everything: _Candidates

    @abstractmethod
    def sharing(self, words: list[str]) -> _Candidates:
        """The originals holding every one of ``words``, or a few more."""

    @abstractmethod
    def any_of(self, words: Iterable[str]) -> _Candidates:
        """The originals holding at least one of ``words`` (all in the vocabulary)."""

    @abstractmethod
    def both(self, first: _Candidates, second: _Candidates) -> _Candidates:
        """The originals in both candidate sets."""

    @abstractmethod
    def count(self, candidates: _Candidates) -> int:
        """How many originals a candidate set holds."""

    @abstractmethod
    def positions(self, candidates: _Candidates) -> Collection[int]:
        """The positions of the originals of a candidate set."""


class _MaskIndex(_WordIndex[int]):
    """Owners as bit masks: bit ``p`` is set when original ``p`` holds the word."""

    owners: dict[str, int]

    def __init__(self, texts: Sequence[str]) -> None:
        owners: dict[str, int] = {}
        get = owners.get
        for position, text in enumerate(texts):
            bit = 1 << position
            for word in set(text.split()):
                owners[word] = get(word, 0) | bit
        self.owners = owners
        self.everything = (1 << len(texts)) - 1

    def sharing(self, words: list[str]) -> int:
        # the masks fetched in one call (a word no original holds: no candidate at all)
        if len(words) == 1:
            return self.owners.get(words[0], 0)
        try:
            masks: tuple[int, ...] = itemgetter(*words)(self.owners)
        except KeyError:
            return 0
        return reduce(and_, masks)

    def any_of(self, words: Iterable[str]) -> int:
        return reduce(or_, map(self.owners.__getitem__, words), 0)

    def both(self, first: int, second: int) -> int:
        return first & second

    def count(self, candidates: int) -> int:
        return candidates.bit_count()

    def positions(self, candidates: int) -> Collection[int]:
        if not candidates & (candidates - 1):  # none or one
            return (candidates.bit_length() - 1,) if candidates else ()
        found = []
        while candidates:
            lowest = candidates & -candidates
            found.append(lowest.bit_length() - 1)
            candidates ^= lowest
        return found


class _ListIndex(_WordIndex["Sequence[int] | set[int]"]):
    """Owners as lists of positions, for corpora too large for masks."""

    owners: dict[str, list[int]]

    def __init__(self, texts: Sequence[str]) -> None:
        owners: defaultdict[str, list[int]] = defaultdict(list)
        for position, text in enumerate(texts):
            for word in set(text.split()):
                owners[word].append(position)
        self.owners = dict(owners)
        self.everything = range(len(texts))

    def sharing(self, words: list[str]) -> Sequence[int] | set[int]:
        # Any word's owners are a complete candidate set; the smallest is the cheapest
        # to verify. A word no original has gives the empty set: no match.
        found = list(map(self.owners.get, words, repeat(())))
        rarest = min(found, key=len)
        if len(rarest) <= _FEW_CANDIDATES:
            return rarest
        found.sort(key=len)  # narrow by the next rarest words
        narrowed = set(rarest).intersection(*found[1:3])
        if len(narrowed) > _MANY_CANDIDATES:  # only common words so far: use them all
            narrowed.intersection_update(*found[3:])
        return narrowed

    def any_of(self, words: Iterable[str]) -> set[int]:
        return set(chain.from_iterable(map(self.owners.__getitem__, words)))

    def both(self, first: Sequence[int] | set[int], second: Sequence[int] | set[int]) -> set[int]:
        return set(first).intersection(second)

    def count(self, candidates: Sequence[int] | set[int]) -> int:
        return len(candidates)

    def positions(self, candidates: Sequence[int] | set[int]) -> Collection[int]:
        return candidates
