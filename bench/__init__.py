"""Benchmarks of d2lmini, one module per benchmark; ``python bench/run.py`` runs them.

Not part of the test suite. Each benchmark module's docstring says what it measures and is
written into its JSON file in ``bench/results/``; ``common`` holds the timing helpers
(machine description, interleaved repetitions, medians) and ``memory`` the peak-memory probes.
"""
