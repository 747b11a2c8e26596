"""Input formats: readers and writers of TREC files, JSON, pandas and Parquet/Arrow.

Every reader hands the data model (:mod:`ragmetrics.data`) checked columns; the rules that
every reader and writer shares (ids, TREC lines, numbers) live in ``_rules``.
"""

__all__: list[str] = []  # a folder: its modules hold the public names
