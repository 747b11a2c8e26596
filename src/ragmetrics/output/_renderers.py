"""How results read in each output format: one :class:`Renderer` per format, registered.

A renderer says how an :class:`~ragmetrics.EvaluationResult` and a
:class:`~ragmetrics.Comparison` read in its format. The results hold numbers and settings
and expose them as rows (``table_rows``, ``means_rows``, ``marks``, ``legend``, ``note``);
``result.render("markdown")``, the ``to_*`` shorthands, the notebook display and the
command line's ``--format`` all come here. A format of one's own is one registration.

Example:
    >>> import ragmetrics as rm
    >>> result = rm.evaluate({"q": {"a": 1}}, {"q": ["a"]}, "mrr")
    >>> print(result.render("csv"), end="")
    metric,mean,queries,NA
    mrr,1.0,1,0
    >>> sorted(renderers())
    ['csv', 'html', 'json', 'latex', 'markdown', 'text']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragmetrics.errors import InvalidParameterError
from ragmetrics.output import _builtin as builtin

__all__ = ["Renderer", "register_renderer", "render", "renderers"]

Render = Callable[..., str]


@dataclass(frozen=True)
class Renderer:
    """One output format.

    Attributes:
        name: the format's name (``result.render(name)``, ``--format name``).
        summary: what it gives, in a few words (``--help`` and the docs list it).
        result: renders an ``EvaluationResult`` (with the options its format takes);
            None when the format does not render one.
        comparison: renders a ``Comparison``; None likewise.
    """

    name: str
    summary: str
    result: Render | None = None
    comparison: Render | None = None


_RENDERERS: dict[str, Renderer] = {}


def _builtins() -> None:
    for name, summary, result, comparison in builtin.FORMATS:
        _RENDERERS[name] = Renderer(name, summary, result, comparison)


def register_renderer(renderer: Renderer) -> Renderer:
    """Add a format (the same one again is a no-op); returns it."""
    if not isinstance(renderer, Renderer) or not renderer.name.isidentifier():
        raise InvalidParameterError(
            f"register_renderer takes a Renderer whose name is a word (letters, digits, _); "
            f"got {renderer!r}."
        )
    known = _RENDERERS.get(renderer.name)
    if known is not None and known != renderer:
        raise InvalidParameterError(
            f"An output format named {renderer.name!r} is already registered; register yours "
            f"under another name."
        )
    _RENDERERS[renderer.name] = renderer
    return renderer


def renderers() -> dict[str, Renderer]:
    """Every registered format, by name (the built-in ones first)."""
    return dict(_RENDERERS)


def render(value: Any, fmt: str, **options: Any) -> str:
    """``value`` (a result or a comparison: its ``rendered_as``) in the format ``fmt``."""
    kind = getattr(value, "rendered_as", None)
    known = renderers()
    renderer = known.get(fmt) if isinstance(fmt, str) else None
    if renderer is None:
        raise InvalidParameterError(
            f"Unknown output format {fmt!r}; the formats are {', '.join(known)} "
            f"(register_renderer adds one)."
        )
    function = getattr(renderer, kind) if kind in ("result", "comparison") else None
    if function is None:
        raise InvalidParameterError(
            f"The {fmt} format renders no {type(value).__name__}; the formats that do: "
            f"{', '.join(n for n, r in known.items() if kind and getattr(r, kind, None))}."
        )
    return str(function(value, **options))


_builtins()
