"""Questions: a question cleaned for search (``query``), the facts its words name - model
codes, product lines, fiscal periods, statements (``facts``, ``statements``) - matched against
the identity cards (``question``, ``filings`` for companies and periods), and whether a turn of a
conversation continues the one before (``conversation``). A change to how a question's fiscal
quarter is read goes in ``facts`` (the period grammar itself is ``chop.text.periods``).

May import ``labelling`` and the floors below it."""
