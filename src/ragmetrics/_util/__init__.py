"""Helpers every part of the core shares: arrays, exact sums, the garbage collector's
pause, optional imports, warnings, progress bars and small tables.
"""
