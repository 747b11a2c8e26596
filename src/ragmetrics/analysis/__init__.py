"""Analysis of results: paired comparisons and their statistics, sensitivity to settings,
slices of the queries, and prediction-powered intervals; ``evaluate`` with those options.
"""

__all__: list[str] = []  # a folder: its modules hold the public names
