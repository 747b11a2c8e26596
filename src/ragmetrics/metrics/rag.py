"""RAG set metrics (filled in by the rarity-aware family)."""
