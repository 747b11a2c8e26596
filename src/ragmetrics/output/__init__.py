"""Output: the HTML report and its plots."""
