"""chop's page in the browser: ask with sources, see and add documents.

``static/`` holds the page (plain HTML, CSS and JavaScript, no framework, nothing from a CDN);
``app`` serves it with the few routes the LangGraph server's API has no call for
(``deploy/webapp.py`` mounts it through ``langgraph.json``); ``serve`` is ``chop serve``.
"""
