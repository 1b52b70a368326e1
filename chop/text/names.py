"""Names shared by the ingest and question sides: identifiers that name no document."""

from __future__ import annotations

import re

_ACCESSION = re.compile(r"^\d{10}-\d{2}-\d{6}$")  # an SEC filing's id: 0000764478-23-000006


def is_identifier(title: str) -> bool:
    """A title no person would recognise: an SEC accession number."""
    return bool(_ACCESSION.match(title.strip()))
