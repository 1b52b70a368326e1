"""prefix: give every chunk its CNM in document order, and write x_i = PFX(CNM_i) + C_i.

TRUE chunks take the CNM of the chunk before them (which may itself be inherited), so a topic
keeps one signature until the next shift. Fallbacks are explicit and flagged: a failed
extraction takes the previous chunk's CNM, or the document profile at a document's start.
"""

from __future__ import annotations

from typing import Any

from chop_rag.labelling.cnm import CNM, embedded_text, prefix_line, section_title
from chop_rag.labelling.profile import profile_cnm
from chop_rag.state import DocumentState, PreparedChunk


def prefix(state: DocumentState) -> dict[str, Any]:
    labels = {label["index"]: label for label in state.get("labels", [])}
    prepared: list[PreparedChunk] = []
    current: CNM | None = None
    for chunk in sorted(state.get("chunks", []), key=lambda c: c["index"]):
        label = labels[chunk["index"]]
        flags = list(label["flags"])
        source: str = label["cnm_source"]
        if label["cnm"] is not None:
            current = label["cnm"]
        elif current is None:  # the document's start without an extracted CNM
            current = profile_cnm(state.get("profile"))
            source = "document"
            if label["cnm_source"] == "inherited":
                flags.append("inherited_without_head")
        cnm = CNM(
            category=current["category"], nouns=list(current["nouns"]), model=current["model"]
        )
        prepared.append(
            PreparedChunk(
                chunk=chunk,
                cnm=cnm,
                cnm_source=source,
                continuity=label["continuity"],
                flags=flags,
                prefix=prefix_line(cnm, chunk["doc_title"]),
                embedded_text=embedded_text(cnm, chunk["text"], chunk["doc_title"]),
                section_title=section_title(chunk),
            )
        )
    return {"prepared": prepared}
