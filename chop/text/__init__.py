"""Parsing shared by the ingest side (cards, labels) and the question side: fiscal periods and
dates (``periods``) and text that reads as an instruction to the model (``grounding``).

Owns no state and imports nothing of chop but ``config`` and ``types``: both sides use it, neither
owns it."""
