"""The demo's evaluation set, written by this project: originals, questions, graded judgments.

Conversation facts become ``Date:``-headed sessions of ``user:`` / ``assistant:`` turns; each
fact's turns land in different sessions. Handbook facts become policy pages, FAQ pages,
procedure pages, archived pages, an overview and a newsletter. Grades (1..5): the answering
original 5, a confirming one 4, a same-topic one 3, a weak one 2, a misleading or unrelated
one 1; every original is graded for every question. ``_facts.PROFILE`` makes the evidence
uneven, so that rarity weighting changes numbers.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from ragmetrics.data._dataset import RetrievalDataset
from ragmetrics.data._nuggets import Nuggets
from ragmetrics.datasets._facts import (
    CONVERSATION,
    EXTRA_TURNS,
    HANDBOOK,
    HANDBOOK_PAGES,
    PROFILE,
    UNANSWERED,
)

__all__ = [
    "FILLER",
    "GRADES",
    "MONTHS",
    "N_SESSIONS",
    "REPLIES",
    "build",
    "write",
]

REPLIES = [
    "That sounds like a big step. How are you feeling about it?",
    "Thanks for telling me, I will keep that in mind.",
    "Good to know! Is there anything you would like help planning?",
    "I hope the rest of the week is calmer for you.",
    "That is lovely to hear. What are you looking forward to next?",
    "Understood. Do you want a reminder about that later?",
]
FILLER = [
    "Work was quiet today, mostly emails.",
    "I made soup and watched a documentary about bridges.",
    "The tram was late again so I walked part of the way.",
    "Nothing special to report, just a slow Sunday.",
    "I tidied the kitchen and finally fixed the shelf.",
    "We had a long meeting about the new shared calendar.",
    "I tried a new bakery, their rye bread is excellent.",
    "It rained all day so I stayed in and read the news.",
    "My phone screen cracked, I need to find a repair shop.",
    "I called my grandmother, she is doing well.",
    "The heating in the flat makes a strange ticking noise.",
    "I spent the evening sorting old photos into albums.",
    "A friend recommended a podcast about the history of maps.",
    "The supermarket had no oat milk, which ruined my plans.",
    "I walked along the canal at sunset, it was beautiful.",
    "We played board games until midnight.",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
N_SESSIONS = 24
GRADES = (5, 4, 3, 1)  # decisive, supporting, partial, distractor


def _date(index: int) -> str:
    hour = 9 + (index * 5) % 10
    return (
        f"{hour % 12 or 12}:{(index * 17) % 60:02d} {'am' if hour < 12 else 'pm'} on "
        f"{1 + (index * 7) % 27} {MONTHS[(index // 2) % 12]}, 2024"
    )


def build(seed: int = 7) -> RetrievalDataset:
    """The demo evaluation set (deterministic for a seed)."""
    rng = random.Random(seed)
    sessions: list[list[str]] = [[] for _ in range(N_SESSIONS)]
    queries: dict[str, str] = {}
    judgments: dict[str, dict[str, int]] = {}
    metadata: dict[str, dict[str, str]] = {}

    def place(query_id: str, graded: list[tuple[int, str]], places: list[int]) -> None:
        others = [s for s in range(N_SESSIONS) if s not in places]
        places = places + rng.sample(others, len(graded) - len(places))
        for (grade, turn), session in zip(graded, places, strict=True):
            sessions[session].append(turn)
            judgments[query_id][f"session-{session + 1:02d}"] = grade

    for key, question, *turns in CONVERSATION:
        query_id = f"chat-{key}"
        queries[query_id] = question
        metadata[query_id] = {"source": "conversation", "evidence": PROFILE.get(key, "even")}
        judgments[query_id] = {}
        graded = list(zip(GRADES, turns, strict=True))
        if PROFILE.get(key) == "needle":
            graded = [g for g in graded if g[0] != 4]  # no confirming turn
        first = rng.randrange(0, N_SESSIONS - 8)
        later = rng.randrange(first + 1, N_SESSIONS)  # a confirmation comes later
        place(query_id, graded + EXTRA_TURNS.get(key, []), [first, later])
    for key, question, graded in UNANSWERED:
        query_id = f"chat-{key}"
        queries[query_id] = question
        metadata[query_id] = {"source": "conversation", "evidence": "no answer"}
        judgments[query_id] = {}
        place(query_id, list(graded), [])
    corpus: dict[str, str] = {}
    for index, user_turns in enumerate(sessions):
        rng.shuffle(user_turns)
        lines = [f"Date: {_date(index)}"]
        for turn in user_turns + rng.sample(FILLER, 7):
            lines += [f"user: {turn}", f"assistant: {rng.choice(REPLIES)}"]
        corpus[f"session-{index + 1:02d}"] = "\n".join(lines)

    faq_pages = [HANDBOOK[i::3] for i in range(3)]
    for key, question, decisive, *_ in HANDBOOK:
        query_id = f"handbook-{key}"
        queries[query_id] = question
        metadata[query_id] = {"source": "handbook", "evidence": "even"}
        corpus[f"policy-{key}"] = (
            f"{key.title()} policy\n\n{decisive} This policy applies to all permanent staff. "
            f"Questions about it can be sent to the HR service desk."
        )
        faq = next(i for i, page in enumerate(faq_pages) if any(f[0] == key for f in page))
        procedures = ["procedures-a", "procedures-b"][len(key) % 2]
        archive = ["archive-2018", "archive-2019"][len(question) % 2]
        judgments[query_id] = {f"policy-{key}": 5, f"faq-{faq + 1}": 4, procedures: 3, archive: 1}
    for number, page in enumerate(faq_pages, start=1):
        corpus[f"faq-{number}"] = "Frequently asked questions\n\n" + "\n\n".join(f[3] for f in page)
    for name, parity in (("procedures-a", 0), ("procedures-b", 1)):
        corpus[name] = "Procedures\n\n" + " ".join(
            f[4] for f in HANDBOOK if len(f[0]) % 2 == parity
        )
    for name, parity in (("archive-2018", 0), ("archive-2019", 1)):
        corpus[name] = "Archived policies (no longer valid)\n\n" + "\n".join(
            f[5] for f in HANDBOOK if len(f[1]) % 2 == parity
        )
    for doc_id, title, items in HANDBOOK_PAGES:
        corpus[doc_id] = f"{title}\n\n" + "\n".join(sentence for _, _, sentence in items)
        for key, grade, _ in items:
            judgments[f"handbook-{key}"][doc_id] = grade
            if grade == 5:
                metadata[f"handbook-{key}"]["evidence"] = "several answers"
            elif grade == 4:
                metadata[f"handbook-{key}"]["evidence"] = "many confirmations"
    # every original is graded for every question (the corpus is small enough): what no
    # turn or page ties to a question is not relevant to it (1), never left unjudged
    for graded_docs in judgments.values():
        for doc_id in corpus:
            graded_docs.setdefault(doc_id, 1)
    return RetrievalDataset(
        queries=queries, corpus=corpus, relevant_docs=judgments, query_metadata=metadata
    )


def nuggets(dataset: RetrievalDataset | None = None) -> Nuggets:
    """The demo's nuggets: for each answered question one vital fact, its answer, stated by
    the originals graded 5 (the turn or page that answers) and 4 (those that confirm it);
    the unanswered questions have none (their nugget metrics are NA)."""
    data = dataset if dataset is not None else build()
    made: dict[str, dict[str, Any]] = {}
    for query_id, question in data.queries.items():
        support = sorted(d for d, g in data.qrels[query_id].items() if g >= 4)
        if support:
            made[query_id] = {
                "answer": {"text": f"the answer to: {question}", "vital": True, "support": support}
            }
    return Nuggets.from_dict(made)


def write(folder: Path) -> Path:
    """Write the evaluation set as ``dataset.json`` in ``folder``, and its nuggets beside it
    as ``nuggets.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dataset.json"
    data = build()
    data.to_json(path, indent=1)
    nuggets(data).to_json(folder / "nuggets.json")
    return path
