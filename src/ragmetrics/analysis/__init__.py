"""Analysis of results: paired comparisons and their statistics, sensitivity to settings,
and diagnoses of single queries.
"""
