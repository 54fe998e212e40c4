"""Figures the book draws with its own code (SVG in both editions), kept current by a check."""
