"""The engine: settings, the queries to score, locating judged docs, the kernels' calls and
the result; in memory (:mod:`.evaluation`) or in bounded memory (:mod:`.stream`).
"""

__all__: list[str] = []  # a folder: its modules hold the public names
