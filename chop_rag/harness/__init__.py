"""Harnesses that are not the product: a stub OpenAI-compatible LLM server for tests and
benchmarks (``stub_llm``), a standalone PostgreSQL for the external-server tests
(``standalone_pg``), and the sample corpus behind ``chop sample`` (``sample_corpus``).

No product module imports this package; only the ways in (``chop_rag.cli``), tests and bench/ do."""
