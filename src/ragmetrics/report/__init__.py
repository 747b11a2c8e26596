"""The HTML report of a comparison, its per-query explorer, and plots."""

__all__: list[str] = []  # a folder: its modules hold the public names
