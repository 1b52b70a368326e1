"""Answers: the reply written from the retrieved sections (``answering``), and figures read from
filings' tables (``statement_rows``, ``figures``), the metric a question asks for
(chop_rag.questions' ``metric_questions`` and ``line_items``) computed by code (``formulas``).

May import ``retrieval``, ``state`` and the floors below them."""
