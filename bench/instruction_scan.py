"""How often the labeller-instruction rule fires on real documents, read by chop's own loaders:
the instructions chop_rag.text.grounding.instructions finds in each (what ingest warns about:
sentences, and what hides in comments, alt texts, link titles and chat role blocks); every
one is a false alarm there.

python -m bench.instruction_scan ../shared/data/emanual-qa [more files or folders]
    [--out bench/results/instruction-scan]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bench.report import RESULTS, script_parser
from chop_rag.reading.loaders.files import files_to_load, load_one
from chop_rag.text.grounding import _sentence, instructions


def scan(paths: list[str]) -> dict[str, object]:
    """Sentences read and those flagged, per the loaders' text of every supported file."""
    problems: list = []
    sentences, flagged = 0, []
    for path in files_to_load(paths, problems):
        documents, _ = load_one(path, 100)
        for document in documents:
            sentences += len(_sentence.findall(document["text"]))
            for found in instructions(document["text"]):
                flagged.append({"file": path.name, "sentence": found[:200]})
    return {"paths": paths, "sentences": sentences, "flagged": flagged}


def main(argv: Sequence[str] | None = None) -> None:
    parser = script_parser("bench.instruction_scan", __doc__)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--out", default=str(RESULTS / "instruction-scan"))
    args = parser.parse_args(argv)
    result = scan(args.paths)
    flagged = result["flagged"]
    assert isinstance(flagged, list)
    print("| sentences | flagged |\n|---|---|")
    print(f"| {result['sentences']} | {len(flagged)} |")
    for item in flagged:
        print(f"- {item['file']}: {item['sentence']}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scan.json").write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
