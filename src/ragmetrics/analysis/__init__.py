"""Analysis of results: paired comparisons and their statistics, sensitivity to settings,
and diagnoses of single queries.
"""

__all__: list[str] = []  # a folder: its modules hold the public names
