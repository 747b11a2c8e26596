"""Progress bars: tqdm's notebook widget when ipywidgets is installed, its text bar otherwise.

``tqdm.auto`` warns inside a notebook that lacks ipywidgets; this picks quietly, and only when
a bar is actually made (importing ragmetrics never touches tqdm).
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any


def progress_bar(iterable: Any = None, **options: Any) -> Any:
    """A tqdm progress bar over ``iterable`` (``disable=True`` to hide it)."""
    if find_spec("ipywidgets") is None:
        from tqdm import tqdm

        return tqdm(iterable, **options)
    from tqdm.auto import tqdm as notebook_aware

    return notebook_aware(iterable, **options)
