"""The LangGraph server's pieces that chop ships (the checkpointer factory)."""
