"""Retrieval: the search for a question over the store (``retrieve``), and LangChain's
interfaces over it (``retriever``, ``vectorstore``).

May import ``questions`` and the floors below it; ``chop_rag.state`` stands on this floor too."""
