"""Reading documents: files to text with their structure (``loaders``, ``pdf_layout``, a
crash-proof parse in a subprocess in ``parse_worker``), a document and its sections
(``documents``), and chunks cut to size (``chunking``). A change to how a PDF's headings are
found goes in ``pdf_layout``.

May import the floors below: ``config``, ``types``, ``text``, ``store``, ``models``."""
