"""How much topic-shift signal adjacent-chunk similarity carries (the continuity gate's input).

    python -m bench.studies.gate_signal [--data PATH]

Splits the S10 and TV manuals into chop's 200/40 token windows, embeds them with MiniLM, and
compares the similarity of adjacent chunks (relative to the manual's background, the gate's
scale; chop_rag.reading.chunking.relative_adjacent_similarity) with whether the later chunk starts
in another section (the hidden evaluation labels). Writes bench/results/gate_signal.{json,md}.
"""

from __future__ import annotations

import bisect
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.emanual import DEFAULT_DATA, DEFAULT_OUT
from bench.report import script_parser
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.reading.chunking import (
    background_similarity,
    relative_adjacent_similarity,
    token_windows,
)
from chop_rag.reading.loaders import load_emanual

MANUALS = ("s10_manual_corpus.json", "smart_tv_remote_manual_corpus.json")
BANDS = ((-1.0, 0.0), (0.0, 0.3), (0.3, 0.4), (0.4, 0.5), (0.5, 1.01))


def measure(path: Path, ctx: Context) -> dict[str, object]:
    document = load_emanual(path)
    embedder = get_embedder(ctx)
    windows = token_windows(document["text"], embedder.tokenizer, ctx.chunk_tokens,
                            ctx.chunk_overlap)  # fmt: skip
    vectors = embedder.embed([document["text"][w.start : w.end] for w in windows])
    similarity = np.array(relative_adjacent_similarity(vectors)[1:], dtype=float)
    starts = [span["start"] for span in document["spans"]]

    def section(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    shift = np.array([section(windows[i].start) != section(windows[i - 1].start)
                      for i in range(1, len(windows))])  # fmt: skip
    bands = []
    for low, high in BANDS:
        inside = (similarity >= low) & (similarity < high)
        rate = float(shift[inside].mean()) if inside.any() else None
        bands.append({"band": f"[{low}, {min(high, 1.0)})", "pairs": int(inside.sum()),
                      "shift_rate": rate})  # fmt: skip
    return {"manual": path.name, "chunks": len(windows), "shift_rate": float(shift.mean()),
            "background_cosine": background_similarity(vectors), "bands": bands}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = script_parser("bench.studies.gate_signal", __doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"error: E-Manual data not found at {args.data}", file=sys.stderr)
        return 2
    results = [measure(args.data / name, Context()) for name in MANUALS]
    lines = ["# Adjacent-chunk similarity vs section shifts", "",
             "Similarity relative to the manual's background (0 = like chunks far apart, "
             "1 = identical): the gate's scale.", "",
             "| manual | chunks | background cosine | shift rate | band | pairs | "
             "shift rate in band |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        for b in r["bands"]:  # type: ignore[attr-defined]
            rate = "-" if b["shift_rate"] is None else f"{b['shift_rate']:.2f}"
            cells = [r["manual"], r["chunks"], f"{r['background_cosine']:.3f}",
                     f"{r['shift_rate']:.2f}", b["band"], b["pairs"], rate]  # fmt: skip
            lines.append("| " + " | ".join(map(str, cells)) + " |")
    text = "\n".join(lines) + "\n"
    (DEFAULT_OUT / "gate_signal.md").write_text(text, encoding="utf-8")
    (DEFAULT_OUT / "gate_signal.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
