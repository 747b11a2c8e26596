"""trec_eval's arguments as GNU getopt reads them (:func:`options`): flags anywhere before
``--``, short flags combined, values attached or apart, long names or their unambiguous
prefixes."""

from __future__ import annotations

from collections.abc import Sequence

from ragmetrics.cli._trec_measures import USAGE, TrecEvalError, c_long
from ragmetrics.formats._rules import ascii_int

__all__ = ["Options", "options"]


class Options:
    """The options of one call, as read from its arguments (each starts at its default)."""

    per_query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    max_docs: int | None = None
    n_docs: int = 0
    debug_query: str | None = None
    specs: list[str] | None = None
    help: bool = False
    version: bool = False
    files: tuple[str, str] | None = None
    zscores: str | None = None
    rel_format: str = "qrels"


_SHORT_WITH_VALUE = set("mlDNMRTZ")
_SHORT_ALONE = set("hvqcnJo")
_LONG = {
    "help": "h",
    "version": "v",
    "query_eval_wanted": "q",
    "measure": "m",
    "complete_rel_info_wanted": "c",
    "level_for_rel": "l",
    "nosummary": "n",
    "Debug_level": "D",
    "Judged_docs_only": "J",
    "Number_docs_in_coll": "N",
    "Max_retrieved_per_topic": "M",
    "Rel_info_format": "R",
    "Results_format": "T",
    "Output_old_results_format": "o",
    "Zscore": "Z",
}


# the flags that set a switch of the options: flag -> (attribute, value)
_SWITCHES = {
    "h": ("help", True),
    "q": ("per_query", True),
    "c": ("complete", True),
    "n": ("summary", False),
    "J": ("judged_only", True),
}


def options(argv: Sequence[str]) -> Options:
    """The arguments as GNU getopt reads trec_eval's: flags anywhere before ``--``, short
    flags combined, values attached or apart, long names or their unambiguous prefixes."""
    pairs, files = _getopt(list(argv))
    options = Options()
    options.specs = []
    for flag, value in pairs:
        if flag == "v":
            options.version = True
            return options  # trec_eval stops at -v
        if flag in _SWITCHES:
            attribute, setting = _SWITCHES[flag]
            setattr(options, attribute, setting)
        elif flag == "m":
            options.specs.append(value or "")
        elif flag != "o":  # -o: obsolete in trec_eval too
            _valued(options, flag, value or "")
    if not options.help:
        if len(files) != 2:
            raise TrecEvalError(USAGE, 1)
        options.files = (files[0], files[1])
    return options


def _getopt(items: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """``(flag, value)`` for each option in order (long names as their short flag), and the
    other arguments."""
    pairs: list[tuple[str, str | None]] = []
    files: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if item == "--":
            files.extend(items[i:])
            break
        if item.startswith("--"):
            i = _long_option(item, items, i, pairs)
        elif item.startswith("-") and item != "-":
            i = _short_options(item, items, i, pairs)
        else:
            files.append(item)
    return pairs, files


def _long_option(item: str, items: list[str], i: int, pairs: list[tuple[str, str | None]]) -> int:
    """Reads ``--name[=value]`` (its value may be the next argument, at ``i``) into
    ``pairs``; returns where the next argument is."""
    name, eq, value = item[2:].partition("=")
    matches = [n for n in _LONG if n.startswith(name)]
    exact = [n for n in matches if n == name]
    if exact:
        matches = exact
    if len(matches) != 1:
        raise TrecEvalError(f"{USAGE}\n(unknown or ambiguous option '{item}')", 1)
    flag = _LONG[matches[0]]
    # trec_eval's long -o takes a value its short form does not (and ignores it)
    if flag not in _SHORT_WITH_VALUE and flag != "o":
        if eq:
            raise TrecEvalError(f"{USAGE}\n(option '--{matches[0]}' takes no value)", 1)
        pairs.append((flag, None))
        return i
    if not eq:
        if i >= len(items):
            raise TrecEvalError(f"{USAGE}\n(option '{item}' needs a value)", 1)
        value, i = items[i], i + 1
    pairs.append((flag, value))
    return i


def _short_options(item: str, items: list[str], i: int, pairs: list[tuple[str, str | None]]) -> int:
    """Reads ``-abc`` or ``-mVALUE`` (a flag's value may be the next argument, at ``i``)
    into ``pairs``; returns where the next argument is."""
    for position in range(1, len(item)):
        flag = item[position]
        if flag in _SHORT_ALONE:
            pairs.append((flag, None))
            continue
        if flag not in _SHORT_WITH_VALUE:
            raise TrecEvalError(f"{USAGE}\n(unknown option '-{flag}')", 1)
        value = item[position + 1 :]
        if not value:
            if i >= len(items):
                raise TrecEvalError(f"{USAGE}\n(option '-{flag}' needs a value)", 1)
            value, i = items[i], i + 1
        pairs.append((flag, value))
        break
    return i


def _valued(options: Options, flag: str, value: str) -> None:
    if flag in "lMN":
        number = _integer(flag, value)
        if flag == "l":
            if number < 0:
                raise TrecEvalError(
                    f"ragmetrics trec_eval: -l {number}: below 0, trec_eval counts every "
                    f"unjudged doc retrieved as relevant, though not in R (P_k reaches 1 while "
                    f"recall cannot); give -l 0 or more.",
                    1,
                )
            options.level = number
        elif flag == "M":
            options.max_docs = number
        else:
            options.n_docs = number
    elif flag == "D":
        level, _, query = value.partition(".")
        _integer(flag, level)
        options.debug_query = query or None
    elif flag == "R":
        if value not in ("qrels", "qrels_jg", "prefs", "qrels_prefs"):
            raise TrecEvalError(f"trec_eval: Illegal rel_format '{value}'", 2)
        options.rel_format = value
    elif flag == "T" and value != "trec_results":
        raise TrecEvalError(f"trec_eval: Illegal retrieval results format '{value}'", 2)
    elif flag == "Z":
        options.zscores = value


def _integer(flag: str, value: str) -> int:
    """A flag's integer; where trec_eval reads ``-l abc`` as 0, we refuse (docs/cli.md)."""
    number = ascii_int(value)
    if number is None:
        raise TrecEvalError(
            f"ragmetrics trec_eval: -{flag} {value!r} is not an integer (trec_eval would read "
            f"it as {c_long(value)}); give a whole number, e.g. -{flag} 2.",
            1,
        )
    return number
