"""The command line beyond ``chop_rag.cli``: the chat loop (``chat``), a coordinator that feeds
workers on a server (``coordinator``), the progress bar (``progress``) and the settings tables
(``settings_docs``). A way in: may import anything of chop."""
