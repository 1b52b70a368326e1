"""Questions: what a question's words say and which documents they mean, read top to bottom
(each module imports only those before it; tests/test_architecture.py holds the order):

- ``query``: the question cleaned for search;
- ``statements``: the financial statements it names, and how filings title them;
- ``line_items``, ``metric_questions``: the line item or metric it asks for (as filings label
  them), for which years, and the statements printing its inputs (``statements_needed``);
- ``facts``: everything its words say without the cards, read once (``read_question``): the
  names it writes, the periods, forms and statements it names, the kind of question;
- ``filings``: which filings cover a period, and which hold a forecast or an event;
- ``matching``: the facts matched against the identity cards (``resolve``, one
  ``Resolution``), the topic left to search;
- ``pronouns``: what a follow-up's pronoun can stand for (number agreement);
- ``conversation``: whether a turn of a conversation continues the one before.

A change to how a question's fiscal quarter is read goes in ``chop_rag.text.periods`` (the period
grammar ingest shares: "Q2 of FY2023", "1H23"); which periods a question names, in ``facts``;
which filing covers a quarter, in ``filings``. How names are compared ("Note10" = "Note 10")
is ``chop_rag.text.names``.

May import ``labelling`` and the floors below it."""
