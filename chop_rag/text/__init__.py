"""Parsing shared by the ingest side (cards, labels) and the question side: fiscal periods and
dates (``periods``: how a fiscal quarter is written, "Q2 of FY2023", "1H23", read the same in
a filing and a question), names (``names``: a company's short names and aliases, product
names compared in one normalised form, identifiers that name nothing), word lists
(``words``), and text that reads as an instruction to the model (``grounding``).

Owns no state and imports nothing of chop but ``config`` and ``types`` (and its own modules):
both sides use it, neither owns it."""
