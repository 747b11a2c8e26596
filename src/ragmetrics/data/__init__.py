"""The data model: :class:`Qrels`, :class:`Run` and :class:`RetrievalDataset`, each validated
in full when built and held as columns in one ``Store``.
"""

__all__: list[str] = []  # a folder: its modules hold the public names
