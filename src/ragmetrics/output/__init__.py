"""Output: the HTML report and its plots."""

__all__: list[str] = []  # a folder: its modules hold the public names
