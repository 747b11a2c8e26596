"""Output formats: how results and comparisons read as text, markdown, LaTeX, CSV, HTML and
JSON, one registered :class:`Renderer` per format."""

from ragmetrics.output._renderers import Renderer, register_renderer, render, renderers

__all__ = ["Renderer", "register_renderer", "render", "renderers"]
