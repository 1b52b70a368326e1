"""Models: chat models and embedders built in one place (``construction``), local weights found
on disk (``weights``), embedders (``embedders``), and the LLM call with its retries, deadline and
cache (``llm``).

May import ``config``, ``types``, ``stage_profile``, ``text`` and ``store`` (the LLM cache is a
table)."""
