"""Answers: the reply written from the retrieved sections (``answering``), and figures read from
filings' tables (``figures``, ``line_items``) and computed by code (``formulas``).

May import ``retrieval``, ``state`` and the floors below them."""
