"""The LangGraph server's custom HTTP app, chop's page
(``"http": {"app": "chop_rag.deploy.webapp:app"}`` in langgraph.json).

The server merges these routes with its own API, so the page (``/chop/``) and the threads and
runs it calls are served by one process: ``langgraph dev``, ``chop serve`` or a deployment.
"""

from chop_rag.web.app import app

__all__ = ["app"]
