"""The LangGraph server's custom HTTP app (``"http": {"app": "deploy.webapp:app"}``): chop's page.

The server merges these routes with its own API, so the page (``/chop/``) and the threads and
runs it calls are served by one process: ``langgraph dev``, ``chop serve`` or a deployment.
"""

from chop.web.app import app

__all__ = ["app"]
