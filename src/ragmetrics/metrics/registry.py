"""The metric registry: what each metric means, declared once, and the parser of its names.

A :class:`MetricSpec` holds everything the library knows about a metric: its kernel, whether
it takes a cutoff, whether higher is better, the parameters it accepts (with type, default,
valid range and meaning), and the grade scale it needs. Every name a caller may write
resolves here (canonical, trec_eval ``P_10`` / ``P.10``, ir_measures ``P(rel=2)@5``), and
nothing outside the registry recognises a metric by splitting its label.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmetrics._util.exact import exact_sum, to_float
from ragmetrics._util.plugins import load_plugins
from ragmetrics._util.registries import add_entry
from ragmetrics.errors import InvalidParameterError, UnknownMetricError
from ragmetrics.formats._rules import parse_float

if TYPE_CHECKING:
    from ragmetrics.metrics.judged import JudgedRun

__all__ = [
    "ALPHA",
    "CAP3",
    "CAP4",
    "DCG",
    "GAINS",
    "GEOMETRIC_FLOOR",
    "LEVEL",
    "MAX_GRADE",
    "REL",
    "ROUNDING",
    "UNSUPPORTED",
    "WEIGHTING",
    "Aggregate",
    "Cutoff",
    "Kernel",
    "Metric",
    "MetricSpec",
    "Param",
    "Scale",
    "Tally",
    "aliases_of",
    "coerce",
    "keyword_params",
    "parse_metric",
    "parse_metrics",
    "presets_of",
    "register",
    "register_param",
    "registered",
]

# kernel(judged, cutoff, **params) -> one value per query (NaN marks NA)
Kernel = Callable[..., np.ndarray]
# kernel's twin for one ranking: single(one, cutoff, **params) -> the value (NaN: NA), or
# None where these parameters are not covered (the kernel then runs)
SingleKernel = Callable[..., "float | None"]


class Cutoff(Enum):
    """Whether a metric takes a cutoff ``@k``."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    NONE = "none"


class Scale(Enum):
    """The grades a metric can read."""

    ANY = "any integer grades"
    UTILITY = "utility grades 1..5"


class Aggregate(Enum):
    """How a metric's per-query values make its value over a run.

    The value is made from a :class:`Tally` (how many values are defined, how many NA, and
    their exact sum after :meth:`transform`), which merges by addition: batches of whole
    queries give the same value however the queries are split.
    """

    MEAN = "mean over the queries where it is defined"
    GEOMETRIC = "geometric mean, each value floored at 1e-5 (trec_eval's gm_map)"
    SUM = "sum over the queries (trec_eval's counts)"

    def transform(self, defined: np.ndarray) -> np.ndarray:
        """What is summed of each defined value: its log, floored, for a geometric mean."""
        if self is Aggregate.GEOMETRIC:
            logs: np.ndarray = np.log(np.maximum(defined, GEOMETRIC_FLOOR))
            return logs
        return defined

    def tally(self, values: np.ndarray) -> Tally:
        """The :class:`Tally` of per-query ``values`` (NaN: NA)."""
        missing = np.isnan(values)
        defined = values[~missing]
        return Tally(len(defined), int(missing.sum()), exact_sum(self.transform(defined)))

    def finish(self, tally: Tally) -> float:
        """The run's value from its tally; NaN when no value is defined."""
        if not tally.defined:
            return math.nan
        if self is Aggregate.SUM:
            return to_float(tally.total)
        mean = to_float(tally.total, tally.defined)
        return math.exp(mean) if self is Aggregate.GEOMETRIC else mean

    def reduce(self, values: np.ndarray) -> float:
        """The run's value from per-query ``values`` (NaN: NA, left out); NaN when none
        is defined.

        Example:
            >>> round(Aggregate.GEOMETRIC.reduce(np.array([0.5, 0.0])), 6)  # sqrt(0.5 * 1e-5)
            0.002236
        """
        return self.finish(self.tally(values))


@dataclass(frozen=True)
class Tally:
    """What a metric's value over a run is made from, mergeable by ``+``.

    Attributes:
        defined: queries where the metric is defined.
        na: queries where it is NA.
        total: the exact sum of the defined values (after ``Aggregate.transform``), an
            integer in units of ``2**-1127`` (see ``ragmetrics._util.exact``): sums of batches
            add up to the sum of the whole, bit for bit.
    """

    defined: int = 0
    na: int = 0
    total: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.defined + other.defined, self.na + other.na, self.total + other.total)


# trec_eval's MIN_GEO_MEAN: a query scoring 0 would make any geometric mean 0
GEOMETRIC_FLOOR = 0.00001


@dataclass(frozen=True)
class Param:
    """One parameter of a metric, declared once.

    Attributes:
        name: the name written in a metric name, ``P(rel=2)@5``.
        kind: ``int``, ``float`` or ``str``.
        default: the value when nobody sets it (``None``: see ``meaning``).
        meaning: one line for listings and error messages.
        low, high: the valid range of a number (``None``: unbounded).
        low_open, high_open: ``low`` (``high``) itself is excluded.
        choices: the valid values of a string.
        keyword: the keyword of :func:`~ragmetrics.evaluate` that sets it for every metric;
            a parameter with a keyword is registered with :func:`register_param`, which makes
            it a keyword of ``evaluate``, ``evaluate_stream``, ``compare`` and a flag of the
            command line.
        flag: the command line's flag (default ``--`` and the keyword with dashes);
            ``short_flag`` a one-letter one beside it (``-l`` as trec_eval).
    """

    name: str
    kind: type
    default: Any
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    keyword: str | None = None
    flag: str | None = None
    short_flag: str | None = None

    @property
    def cli_flag(self) -> str:
        """The flag of the command line that sets this parameter for every metric."""
        return self.flag or "--" + (self.keyword or self.name).replace("_", "-")

    def valid_values(self) -> str:
        """The valid values in words, e.g. ``a number in [0, 1]``."""
        if self.choices:
            text = "one of " + ", ".join(map(repr, self.choices))
        elif self.kind is int:
            text = "an integer"
        elif self.kind is str:
            text = f"a text in quotes ({self.name}='{self.default}')"
        else:
            text = "a number"
        if self.low is not None and self.high is not None:
            left, right = "(["[not self.low_open], ")]"[not self.high_open]
            text += f" in {left}{self.low:g}, {self.high:g}{right}"
        elif self.low is not None:
            text += f" {'>' if self.low_open else '>='} {self.low:g}"
        if self.default is None:
            text += " or None"
        return text

    def check(self, value: Any, owner: str | None = None) -> Any:
        """``value`` converted to this parameter's kind; raises when it is not valid.

        ``owner`` names the metric whose name gave the value; None means the keyword.
        """
        if value is None and self.default is None:
            return None
        converted = coerce(value, self.kind)
        if converted is None or not self._in_range(converted):
            subject = (
                f"The '{self.name}' parameter of {owner}"
                if owner is not None
                else f"{self.keyword or self.name}"
            )
            raise InvalidParameterError(
                f"{subject} must be {self.valid_values()} ({self.meaning}). Got {value!r} instead."
            )
        return converted

    def _in_range(self, value: Any) -> bool:
        if self.choices:
            return value in self.choices
        if self.kind is str:
            return True
        if not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return self.high is None or value < self.high or (value == self.high and not self.high_open)


def coerce(value: Any, kind: type) -> Any:
    """``value`` as ``kind``, or None when it is not one (bools are never numbers here)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if kind is str:
        return value if isinstance(value, str) else None
    if isinstance(value, (int, np.integer)):
        return kind(value)
    if isinstance(value, (float, np.floating)):
        if kind is int:
            return int(value) if float(value).is_integer() else None
        return float(value)
    return None


# --- the parameters of the built-in metrics (the only place their defaults are written) ---

_KEYWORD_PARAMS: dict[str, Param] = {}


def register_param(param: Param) -> Param:
    """Make ``param`` a keyword of every evaluation (see ``Param.keyword``) and return it.

    Example:
        >>> sorted(keyword_params())[:2]
        ['cap3', 'cap4']
    """
    if param.keyword is None:
        raise InvalidParameterError(f"Parameter {param.name!r} has no keyword to register.")
    return add_entry(_KEYWORD_PARAMS, param.keyword, param, "a keyword parameter")


def keyword_params() -> dict[str, Param]:
    """keyword -> :class:`Param`, for every parameter that a keyword sets, in the order
    they were registered."""
    return dict(_KEYWORD_PARAMS)


REL = register_param(
    Param(
        "rel",
        int,
        1,
        "the lowest grade that counts as relevant, inclusive",
        low=0,  # a negative grade marks a doc judged as not to be counted
        keyword="relevance_threshold",
        short_flag="-l",
    )
)
MAX_GRADE = register_param(
    Param(
        "max_grade",
        float,
        None,
        "the grade whose stopping probability is near 1; None takes the highest grade judged",
        low=0.0,
        low_open=True,
        keyword="err_max_grade",
    )
)
ALPHA = register_param(
    Param(
        "alpha",
        float,
        1.0,
        "rarity exponent: a grade's weight grows as its prevalence^-alpha; 0 ignores rarity",
        low=0.0,
        keyword="rarity_alpha",
    )
)
CAP4 = register_param(
    Param(
        "cap4", float, 1.0, "the largest weight of grade 4; grade 5 weighs 1", 0, 1, keyword="cap4"
    )
)
CAP3 = register_param(
    Param(
        "cap3", float, 0.25, "the largest weight of grade 3; grade 5 weighs 1", 0, 1, keyword="cap3"
    )
)
DCG = Param(
    "dcg",
    str,
    "log2",
    "'log2': linear gain, as trec_eval; 'exp-log2': gain 2^grade - 1 (Burges)",
    choices=("log2", "exp-log2"),
)
GAINS = Param(
    "gains",
    str,
    "",
    "gain of each grade, 'grade:gain' separated by ';' (unset grades: the grade itself)",
)
LEVEL = Param(
    "level",
    float,
    0.0,
    "the recall level, 0 to 1 (trec_eval prints 0.00, 0.10, ..., 1.00)",
    low=0.0,
    high=1.0,
)
ROUNDING = Param(
    "rounding",
    str,
    "nearest",
    "how a recall level becomes a number of relevant docs: 'nearest' (trec_eval 10) or "
    "'trec9' (level * R + 0.9, truncated: trec_eval <= 9, pytrec_eval)",
    choices=("nearest", "trec9"),
)
WEIGHTING = (ALPHA, CAP4, CAP3)  # the rarity weighting of the RAG set metrics


@dataclass(frozen=True)
class MetricSpec:
    """Everything the library knows about one metric.

    Attributes:
        name: the canonical name (``ndcg``).
        kernel: ``kernel(judged, cutoff, **params)``, one value per query; NaN marks NA.
        cutoff: whether ``@k`` is required, optional or refused.
        family: ``"classic"`` (ranked, trec_eval conventions) or ``"set"`` (RAG set metrics).
        summary: one line for ``--help`` and listings.
        higher_is_better: the direction every comparison, mark and plot reads.
        params: the parameters it accepts.
        scale: the grades it can read (utility grades 1..5 for most set metrics).
        perfect_is_one: a perfect ranking scores 1 (used by the invariant tests).
        can_be_na: the metric may be undefined for a query.
        aggregate: how the per-query values make the run's value (a mean, by default).
        unit_range: every value lies in [0, 1] (counts do not).
        judged_only: only judged docs count; an unjudged doc is not read as non-relevant
            (bpref), so judging it 0 changes the value.
        counts_judged: the value counts which retrieved docs are judged (unjudged_rate,
            num_nonrel_judged_ret), so judging a doc 0 changes it.
        can_be_negative: values below 0 are possible (a utility with costs).
        real_grades: the formula takes a real-valued grade as it is (a gain: nDCG, DCG,
            ERR), so qrels with grades such as 0.37 are accepted; other metrics refuse them.
        needs_pool: the kernel reads PROC@k's candidate pool (``JudgedRun.pooled``), which
            the locate step then judges in full alongside the run.
        needs_nuggets: the kernel reads where each query's nuggets were found
            (``JudgedRun.nuggets``); an evaluation asking for it needs ``nuggets=``.
        single: the kernel's twin for one ranking, ``single(one, cutoff, **params)`` on a
            :class:`~ragmetrics.metrics.judged.OneRanking`: the same value in plain Python,
            for scoring one ranking a call (the adapters' plug-ins); ``None`` returned, or
            no twin, means the kernel runs.
        pure: the kernel reads only the judged run it is given and keeps no state of its
            own, so that it may run on a thread beside other metrics' kernels (every
            built-in one); a kernel not so marked runs on the calling thread.
    """

    name: str
    kernel: Kernel
    cutoff: Cutoff
    family: str
    summary: str
    higher_is_better: bool = True
    params: tuple[Param, ...] = ()
    scale: Scale = Scale.ANY
    perfect_is_one: bool = True
    can_be_na: bool = False
    aggregate: Aggregate = Aggregate.MEAN
    unit_range: bool = True
    judged_only: bool = False
    counts_judged: bool = False
    can_be_negative: bool = False
    real_grades: bool = False
    needs_pool: bool = False
    needs_nuggets: bool = False
    single: SingleKernel | None = None
    pure: bool = False

    def param(self, name: str) -> Param:
        """The declared parameter ``name``."""
        for param in self.params:
            if param.name == name:
                return param
        accepted = ", ".join(p.name for p in self.params) or "none"
        raise InvalidParameterError(
            f"'{self.name}' has no parameter {name!r}; it accepts: {accepted}."
        )


@dataclass(frozen=True)
class Metric:
    """A metric request: the spec, the cutoff, the parameters and the label as written.

    ``params`` holds the parameters given in the name, or after :meth:`resolve` every
    declared parameter.
    """

    spec: MetricSpec
    cutoff: int | None
    label: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The canonical spelling, e.g. ``ndcg@10`` or ``precision(rel=2)@5``: parameters
        at their defaults are left out, and a preset alias is used where one matches."""
        return self.base_name if self.cutoff is None else f"{self.base_name}@{self.cutoff}"

    @property
    def base_name(self) -> str:
        """The canonical spelling without the cutoff, e.g. ``precision(rel=2)``."""
        changed = {
            p.name: self.params[p.name]
            for p in self.spec.params
            if p.name in self.params and self.params[p.name] != p.default
        }
        base = self.spec.name
        for alias, (target, preset) in _PRESETS.items():
            if target == self.spec.name and preset.items() <= changed.items():
                base = alias
                changed = {k: v for k, v in changed.items() if k not in preset}
                break
        if changed:
            base += "(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"
        return base

    def same_settings(self, other: Metric) -> bool:
        """True when both have the same cutoff and parameter values (specs aside)."""
        shared = set(self.params) & set(other.params)
        return self.cutoff == other.cutoff and all(
            self.params[k] == other.params[k] for k in shared
        )

    @property
    def higher_is_better(self) -> bool:
        return self.spec.higher_is_better

    def resolve(self, keywords: Mapping[str, Any]) -> Metric:
        """This metric with every declared parameter set: the name's value, else the call's
        keyword (``keywords``, by keyword name, already validated), else the default."""
        params = {}
        for param in self.spec.params:
            if param.name in self.params:
                params[param.name] = self.params[param.name]
            elif param.keyword is not None and keywords.get(param.keyword) is not None:
                params[param.name] = keywords[param.keyword]
            else:
                params[param.name] = param.default
        return Metric(self.spec, self.cutoff, self.label, params)

    def compute(self, judged: JudgedRun) -> np.ndarray:
        return self.spec.kernel(judged, self.cutoff, **self.params)


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}
# alias -> (canonical name, parameters it presets), e.g. ndcg_exp -> (ndcg, dcg="exp-log2")
_PRESETS: dict[str, tuple[str, dict[str, Any]]] = {}
# trec_eval writes cutoffs as a "_k" suffix on these bases.
_TREC_CUTOFF_BASES = {"p", "recall", "success", "ndcg_cut", "map_cut", "recip_rank"}
_CUTOFF_ONLY_ALIASES = {"ndcg_cut", "map_cut"}
# Measures of trec_eval and ir_measures that are not computed here: named as such, not
# answered with a "did you mean".
UNSUPPORTED: dict[str, str] = {}
for _name in (
    "num_q",
    "relstring",
    "runid",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "recall_cut",
    "NumQ",
    "SDCG",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "alpha_nDCG",
    "P_IA",
    "AP_IA",
    "nERR_IA",
    "ERR_IA",
    "STREC",
    "INST",
    "INSQ",
    "Compat",
    "accuracy",
):
    UNSUPPORTED.setdefault(_name.lower(), _name)  # trec_eval's spelling first


def register(
    spec: MetricSpec, *aliases: str, presets: Mapping[str, Mapping[str, Any]] | None = None
) -> MetricSpec:
    """Add a metric, its aliases (matched case-insensitively) and its preset aliases
    (``presets={"ndcg_exp": {"dcg": "exp-log2"}}``: a name for the metric with those
    parameter values)."""
    presets = presets or {}
    for alias in (spec.name, *aliases, *presets):
        key = alias.lower()
        if key in _ALIASES and _ALIASES[key] != spec.name:
            raise InvalidParameterError(
                f"The metric alias {alias!r} is already taken by {_ALIASES[key]!r}."
            )
        _ALIASES[key] = spec.name
    for alias, values in presets.items():
        _PRESETS[alias.lower()] = (
            spec.name,
            {k: spec.param(k).check(v, spec.name) for k, v in values.items()},
        )
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> dict[str, MetricSpec]:
    """Every registered metric by canonical name (the plug-ins' included)."""
    load_plugins()
    return dict(_REGISTRY)


def aliases_of(name: str) -> list[str]:
    """The aliases that resolve to a canonical name (preset aliases included)."""
    return sorted(alias for alias, target in _ALIASES.items() if target == name and alias != name)


def presets_of(name: str) -> dict[str, dict[str, Any]]:
    """The preset aliases of a canonical name and the parameters each sets."""
    return {alias: dict(values) for alias, (target, values) in _PRESETS.items() if target == name}


_TREC_PARAM_SUFFIX = re.compile(r"(iprec_at_recall)_([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_CALL = re.compile(r"(?P<base>[^()]*?)\s*\((?P<params>[^()]*)\)")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_metric(text: str) -> Metric:
    """Parse a metric name into a :class:`Metric`.

    Accepted forms: ``name``, ``name@k``; trec_eval's ``name_k`` and ``name.k``
    (``P_10``, ``ndcg_cut.10``, ``iprec_at_recall_0.10``); parameters in ir_measures'
    syntax, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``, ``ra_nwg(alpha=0.5, cap3=0.1)@5``.
    Names are case-insensitive.

    Raises:
        UnknownMetricError: the name is not registered (the message lists close matches, or
            says that a trec_eval measure is not computed here).
        InvalidParameterError: the cutoff is malformed, below 1, missing where required, or
            refused; a parameter is unknown or out of range.
    """
    if not isinstance(text, str):
        raise InvalidParameterError(
            f"A metric name must be a string such as 'ndcg@10'; got {text!r} of type "
            f"{type(text).__name__}."
        )
    label = text
    suffixed = _TREC_PARAM_SUFFIX.fullmatch(text.strip())
    if suffixed:  # trec_eval writes a recall level as a suffix: iprec_at_recall_0.10
        text = f"{suffixed[1]}(level={suffixed[2]})"
    body, cutoff_text = _split_cutoff(text.strip())
    call = _CALL.fullmatch(body)
    base, params_text = (call["base"], call["params"]) if call else (body, None)
    key = base.strip().lower()
    if key not in _ALIASES and not (load_plugins() and key in _ALIASES):
        raise UnknownMetricError(_unknown_message(label, base.strip(), cutoff_text))
    spec = _REGISTRY[_ALIASES[key]]
    params: dict[str, Any] = dict(_PRESETS[key][1]) if key in _PRESETS else {}
    for name, value in _parse_params(params_text, label):
        params[name] = spec.param(name).check(value, f"{label!r}")
    cutoff = None if cutoff_text is None else int(cutoff_text)
    if cutoff is not None and cutoff < 1:
        raise InvalidParameterError(
            f"The cutoff of {label!r} must be an integer >= 1. Got {cutoff} instead."
        )
    if cutoff is None and (spec.cutoff is Cutoff.REQUIRED or key in _CUTOFF_ONLY_ALIASES):
        raise InvalidParameterError(
            f"{label!r} needs a cutoff: write '{base.strip()}@10' (or another k >= 1)."
        )
    if cutoff is not None and spec.cutoff is Cutoff.NONE:
        raise InvalidParameterError(
            f"{label!r}: '{spec.name}' takes no cutoff; write '{spec.name}'."
        )
    return Metric(spec=spec, cutoff=cutoff, label=label, params=params)


def _split_cutoff(text: str) -> tuple[str, str | None]:
    """``(name with parameters, cutoff text or None)`` of ``P(rel=2)@5``, ``P_5``, ``P.5``."""
    if "@" in text:
        body, cutoff_text = text.rsplit("@", 1)
        if not _INTEGER.fullmatch(cutoff_text.strip()):
            raise InvalidParameterError(
                f"The cutoff of {text!r} must be an integer >= 1, as in 'ndcg@10'. "
                f"Got {cutoff_text!r} instead."
            )
        return body.strip(), cutoff_text.strip()
    dotted = re.fullmatch(r"(.+?)\.([0-9]+)", text)
    if dotted and dotted[1].strip().lower() in _ALIASES:
        return dotted[1].strip(), dotted[2]
    underscored = re.fullmatch(r"(.+?)_([0-9]+)", text)
    if underscored and underscored[1].lower() in _TREC_CUTOFF_BASES:
        return underscored[1], underscored[2]
    return text, None


def _parse_params(text: str | None, label: str) -> list[tuple[str, Any]]:
    """``rel=2, dcg='exp-log2'`` as ``[("rel", 2), ("dcg", "exp-log2")]``."""
    if text is None or not text.strip():
        return []
    pairs = []
    for item in text.split(","):
        name, sep, raw = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise InvalidParameterError(
                f"Cannot read the parameters of {label!r}: write them as name=value, "
                f"e.g. 'P(rel=2)@5'."
            )
        pairs.append((name.strip(), _literal(raw.strip())))
    return pairs


def _literal(raw: str) -> Any:
    """A parameter value: a quoted or bare string, an integer or a number."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if _INTEGER.fullmatch(raw):
        return int(raw)
    try:
        return parse_float(raw)  # ASCII only: float() would read other scripts' digits
    except ValueError:
        return raw


def parse_metrics(names: str | Sequence[str]) -> list[Metric]:
    """Parse one name or a sequence of names, dropping exact repeats of a label."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)):
        raise InvalidParameterError(
            "metrics must be a metric name or a list of names, such as ['ndcg@10', 'mrr']; "
            f"got {names!r} of type {type(names).__name__}."
        )
    if not names:
        raise InvalidParameterError(
            "No metric was asked for; pass at least one name, such as 'ndcg@10'."
        )
    return [parse_metric(name) for name in dict.fromkeys(names)]


def _unknown_message(label: str, base: str, cutoff_text: str | None) -> str:
    key = base.lower()
    if key in UNSUPPORTED:
        return (
            f"{label!r}: {UNSUPPORTED[key]} is a trec_eval / ir_measures measure that "
            f"ragmetrics does not compute. Supported metrics: {', '.join(sorted(_REGISTRY))} "
            f"(ragmetrics.list_metrics() lists every alias)."
        )
    fused = re.fullmatch(r"(.+?)([0-9]+)", base)
    if cutoff_text is None and fused and fused[1].lower().rstrip("_-") in _ALIASES:
        hint = f" Did you mean '{fused[1].rstrip('_-')}@{fused[2]}'?"
    else:
        import difflib  # here: only a name that is not known needs it

        candidates = sorted(_ALIASES)
        close = difflib.get_close_matches(key, candidates, n=4, cutoff=0.6)
        suffix = "" if cutoff_text is None else f"@{cutoff_text}"
        hint = " Did you mean " + ", ".join(repr(c + suffix) for c in close) + "?" if close else ""
    return (
        f"Unknown metric {label!r}.{hint} Known metrics: {', '.join(sorted(_REGISTRY))} "
        f"(see ragmetrics.list_metrics() for aliases)."
    )
