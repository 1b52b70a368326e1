"""Labelling: the CNM signature a chunk carries (``cnm``), what a whole document is about
(``profile``), and the identity of a document (model, company, period, form) from its title,
sidecar file and text (``identity``), summed up as cards that questions are matched against
(``cards``).

May import ``reading`` and the floors below it."""
