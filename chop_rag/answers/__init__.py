"""Answers: the reply written from the retrieved sections (``answering``), and figures read from
filings' tables (``statement_rows``, ``figures``, ``line_items``), the metric a question asks
for (``metric_questions``) computed by code (``formulas``).

May import ``retrieval``, ``state`` and the floors below them."""
