"""chop: CHOP (chunkwise context-preserving RAG) as LangGraph graphs over PostgreSQL/pgvector.

The graphs (graphs/) wire one step per file (nodes/); the steps stand on these packages,
listed from the bottom up. A package imports only from its own floor and those below it
(tests/test_architecture.py reads the imports and holds every package to this):

- ``config`` (with ``setting_values``), ``types``, ``stage_profile``, ``text``: settings and
  the rules of their values, shared types, per-stage timing, and the parsing both sides share
  (periods and dates, names, instruction-like text);
- ``store``: the database (PostgreSQL + pgvector, the embedded server, checkpointers);
- ``models``: chat models and embedders, built in one place, and the LLM call with its cache;
- ``reading``: documents read from files (loaders, PDF layout) and cut into chunks;
- ``labelling``: the CNM signature of chunks and the identity cards of documents;
- ``questions``: what a question's words say (model, company, period, statement), read once,
  then matched against the identity cards; a conversation's continuity between turns;
- ``retrieval`` and ``state``: search over the store for a question, the graphs' typed state;
- ``answers``: the reply, grounded in the retrieved sections, figures computed by code;
- the ways in: ``api`` (Python), ``cli`` and ``terminal`` (the command line), ``web`` (the
  page and its routes). ``harness`` holds what is not the product (a stub LLM server, a
  standalone PostgreSQL, the sample corpus): only the ways in, tests and bench/ use it.
"""
