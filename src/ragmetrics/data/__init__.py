"""The data model: :class:`Qrels`, :class:`Run` and :class:`RetrievalDataset`, each validated
in full when built and held as columns in one ``Store``.
"""
