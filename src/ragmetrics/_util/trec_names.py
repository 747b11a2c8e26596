"""Names of trec_eval's measures that both the metrics and the command line need, kept here
where importing them loads nothing else (the command line builds its tables before numpy)."""

__all__ = ["PREFERENCE_COUNTS", "PREFERENCE_MEASURES"]

# trec_eval's preference measures, in the order it prints them; the first three are counts
PREFERENCE_MEASURES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
# the ones that count preferences (summed over queries, printed as integers)
PREFERENCE_COUNTS = frozenset(PREFERENCE_MEASURES[:3])
