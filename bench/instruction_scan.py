"""How often the labeller-instruction rule (chop.text.grounding.is_instruction) fires on real
documents, read by chop's own loaders: every flagged sentence is a false alarm there.

python -m bench.instruction_scan ../shared/data/emanual-qa [more files or folders]
    [--out bench/results/instruction-scan]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bench.report import RESULTS, script_parser
from chop.reading.loaders.files import files_to_load, load_one
from chop.text.grounding import _sentence, is_instruction


def scan(paths: list[str]) -> dict[str, object]:
    """Sentences read and those flagged, per the loaders' text of every supported file."""
    problems: list = []
    sentences, flagged = 0, []
    for path in files_to_load(paths, problems):
        documents, _ = load_one(path, 100)
        for document in documents:
            for sentence in _sentence.findall(document["text"]):
                sentences += 1
                if is_instruction(sentence):
                    flagged.append({"file": path.name, "sentence": sentence.strip()[:200]})
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
