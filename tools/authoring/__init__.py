"""Authoring: ``new_chapter`` writes a new chapter in both editions with every part the checks
ask of a chapter (``make chapter NAME=…``)."""
