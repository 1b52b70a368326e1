"""The E-Manual benchmark harness: pure metrics, gold mapping, chunkers, one end-to-end run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench.chunkers import cosine_spans, sentence_units
from bench.device_naming import build_questions, name_variants
from bench.emanual import (
    DEFAULT_DATA,
    chop_variant,
    chunk_prefix,
    collection_name,
    main,
    map_gold,
    resolve_data,
    tie_orders,
)
from bench.emanual_data import (
    Section,
    build_manual,
    device_name,
    load_subset,
    match_gold,
    parse_remote_qa,
    remote_group,
)
from bench.finance import FinQuestion, fin_record, fin_summary
from bench.metrics import dcg_at_k, hit_at_k, mrr_at_k, ndcg_at_k, token_f1
from chop_rag.config import GATE_BAND, Context
from chop_rag.reading.documents import make_document
from chop_rag.store import Hit, store_for

REPO = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- metrics


def test_hit_at_k() -> None:
    ranked = [False, False, True, False]
    assert hit_at_k(ranked, 1) == 0.0
    assert hit_at_k(ranked, 2) == 0.0
    assert hit_at_k(ranked, 3) == 1.0
    assert hit_at_k(ranked, 10) == 1.0
    assert hit_at_k([], 5) == 0.0


def test_mrr_at_k() -> None:
    assert mrr_at_k([False, True, True], 10) == 0.5
    assert mrr_at_k([False, False, True], 3) == pytest.approx(1 / 3)
    assert mrr_at_k([False, False, True], 2) == 0.0
    assert mrr_at_k([True], 1) == 1.0
    with pytest.raises(ValueError):
        mrr_at_k([True], 0)


def test_ndcg_at_k_hand_computed() -> None:
    ranked = [False, True, False, True]  # relevant at ranks 2 and 4
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert dcg_at_k(ranked, 4) == pytest.approx(dcg)
    # three relevant chunks in the collection: ideal = ranks 1, 2, 3
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(ranked, 4, 3) == pytest.approx(dcg / ideal)
    # ideal capped at K: with K=2 only ranks 1, 2 count
    assert ndcg_at_k(ranked, 2, 3) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([True, False], 10, 1) == 1.0
    assert ndcg_at_k([False, False], 10, 0) == 0.0
    assert ndcg_at_k([False, False], 10, 4) == 0.0


def test_token_f1() -> None:
    assert token_f1("The cat sat.", "cat sat") == 1.0  # articles and punctuation dropped
    # prediction "tap settings now" vs gold "tap settings": P = 2/3, R = 1 → F1 = 0.8
    assert token_f1("Tap Settings now", "tap settings") == pytest.approx(0.8)
    assert token_f1("nothing alike", "tap settings") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("", "tap") == 0.0


def test_tie_orders_bound_the_store_tie_break() -> None:
    def hit(doc: str, score: float, relevant: bool) -> dict[str, object]:
        return {"doc_id": doc, "score_exact": score, "relevant": relevant}

    # S9's copy of the gold chunk ties with S10's; the store put S10 first (by title)
    found = [hit("s10", 0.9, True), hit("s9", 0.9, False), hit("s10", 0.5, False)]
    orders = tie_orders(found, "s10", 2)
    assert [t["doc_id"] for t in orders["store"]] == ["s10", "s9"]
    assert [t["relevant"] for t in orders["ties_against_gold"]] == [False, True]
    assert orders["ties_against_gold"][0]["doc_id"] == "s9"
    assert [t["relevant"] for t in orders["ties_for_gold"]] == [True, False]


# --------------------------------------------------------------------------- data


def sections(*titles: str) -> list[Section]:
    return [Section(title, 10 * i, 10 * i + 5) for i, title in enumerate(titles)]


def test_match_gold_exact_several_and_parent_fallback() -> None:
    manual = sections("Settings", "Camera", "Camera settings", "Location", "Camera settings")
    exact = match_gold("Apps>Camera>Camera settings", manual)
    assert (exact.sections, exact.how) == ((2, 4), "exact")  # several: any counts
    parent = match_gold("Apps>Camera>Video options>Missing leaf", manual)
    assert (parent.sections, parent.how, parent.matched) == ((1,), "parent", "Camera")
    assert match_gold("Nowhere>Nothing", manual).how == "none"
    assert match_gold("", manual).how == "none"


def test_match_gold_normalises_case_apostrophes_and_spaces() -> None:
    manual = sections("Updating the TV’s  Software", "Other")
    found = match_gold("System>updating the tv's software", manual)
    assert (found.sections, found.how) == ((0,), "normalised")


def test_manual_comes_through_chops_loader_with_headings_and_a_plain_text_twin(
    tmp_path: Path,
) -> None:
    corpus = {
        "section_0": {"title": "Intro", "text": ["Intro", "Hello there."]},
        "section_1": {"title": "Empty", "text": []},
        "section_2": {"title": "Use", "text": ["Use", "Tap  it.", "Done"]},
    }
    path = tmp_path / "Galaxy_S9+.json"
    path.write_text(json.dumps(corpus))
    manual = build_manual(path)
    assert manual.device == "Galaxy S9+"
    intro, use = manual.sections  # an empty section has no text to be relevant
    assert (intro.title, use.title) == ("Intro", "Use")
    assert manual.text[intro.start : intro.end] == "Intro Hello there."
    assert manual.text[use.start : use.end].startswith("Use Tap")
    headed = manual.document("headings")
    assert headed["title"] == manual.title
    assert [s["meta"]["heading"] for s in headed["spans"]] == ["Intro", "Use"]
    plain = manual.document("none")
    assert plain["text"] == headed["text"]  # same text, so the same gold spans apply
    assert plain["spans"] == [] and plain["doc_id"] == headed["doc_id"]
    assert plain["metadata"]["format"] == "text"


def test_title_heading_prefix_names_the_heading_of_the_chunks_span() -> None:
    text = "Intro text here.\n\nUse the remote."
    document = make_document(
        "d",
        "Smart TV",
        text,
        spans=[
            {"start": 0, "end": 16, "meta": {"heading": "Intro"}},
            {"start": 18, "end": len(text), "meta": {"heading": "Remote > Use"}},
        ],
    )
    assert chunk_prefix("title_heading", document, 20, 30) == "Smart TV | Remote > Use | "
    assert chunk_prefix("naive_title", document, 20, 30) == "Smart TV | "
    assert chunk_prefix("naive", document, 20, 30) == ""
    bare = make_document("d", "Smart TV", text)
    assert chunk_prefix("title_heading", bare, 20, 30) == "Smart TV | "


def test_remote_qa_files_are_read_despite_their_broken_json() -> None:
    text = """{
    "All_Questions": [
        {
            "Section Hierarchy": "Quick Guides>Using Smart Hub",
            "Link": "https://x/page=08",
            "Question": "Where are the notifications?",
            "Answer": "Refer to "Displaying the Home Screen."" for more."
        }
        {
            "Section Hierarchy": "Settings>Picture",
            "Link": "https://x/page=09",
            "Question": "How do I change the picture mode?",
            "Answer": "Open Picture.",
        },
    ]
}"""
    records = parse_remote_qa(text)
    assert [r["question"] for r in records] == [
        "Where are the notifications?",
        "How do I change the picture mode?",
    ]
    assert records[0]["section_path"] == "Quick Guides>Using Smart Hub"
    assert records[0]["answer"] == 'Refer to "Displaying the Home Screen."" for more.'
    assert remote_group(Path("Yes_No Q&A")) == "Yes/No"
    assert remote_group(Path("Normal Q&A")) == "Normal"


def test_tv_subset_adds_the_remote_qa_questions_by_folder_with_gold_fallbacks() -> None:
    data = resolve_data(None)
    if not data.is_dir():
        pytest.skip(f"E-Manual QA data not found at {data} (set CHOP_EMANUAL_DATA)")
    corpus = load_subset(data, "tv")
    by_group = Counter(q.group for q in corpus.questions)
    assert by_group == {
        "smart_tv_remote_50_questions": 50,
        "Normal": 409,
        "Paraphrased": 200,
        "Compound": 50,
        "Yes/No": 25,
    }
    _, gold = map_gold(corpus)
    assert set(gold["by_group"]) == set(by_group)
    assert sum(sum(c.values()) for c in gold["by_group"].values()) == len(corpus.questions)
    assert gold["fallback_to_parent"] == sum(c["parent"] for c in gold["by_group"].values())


def fin_hit(doc_id: str, pages: list[int]) -> Hit:
    return Hit(id=0, doc_id=doc_id, doc_title=doc_id, chunk_index=0, text="", prefix="",
               category=None, nouns=[], model=None, cnm_source="none", char_start=0,
               char_end=1, metadata={"pages": pages}, score=0.5)  # fmt: skip


def test_fin_relevance_is_an_evidence_page_of_an_evidence_filing() -> None:
    # evidence_page_num 13 (zero-based) is page 14 of the loaded PDF (1-based spans)
    question = FinQuestion("q1", "Q?", "domain-relevant", "Amcor", (("AMCOR_2023_10K", 14),))
    stems = {"/a/AMCOR_2023_10K.pdf": "AMCOR_2023_10K", "/a/AMCOR_2022_10K.pdf": "AMCOR_2022_10K"}
    hits = [
        fin_hit("/a/AMCOR_2022_10K.pdf", [14]),  # right page number, wrong year's filing
        fin_hit("/a/AMCOR_2023_10K.pdf", [13]),  # right filing, the zero-based page: not it
        fin_hit("/a/AMCOR_2023_10K.pdf", [14, 15]),
    ]
    record = fin_record(question, hits, stems)
    assert record["relevant"] == [False, False, True]
    assert record["doc_at_1"] is False
    metrics = fin_summary([record])
    assert (metrics["hit@1"], metrics["hit@3"], metrics["mrr@10"]) == (
        0.0,
        1.0,
        pytest.approx(1 / 3),
    )
    first = fin_record(question, hits[1:], stems)
    assert first["doc_at_1"] is True and first["first_relevant_rank"] == 2


def test_fin_page_in_sources_is_the_share_whose_default_answer_reads_an_evidence_page() -> None:
    question = FinQuestion("q1", "Q?", "domain-relevant", "Amcor", (("AMCOR_2023_10K", 14),))
    ranked = fin_record(question, [fin_hit("/a/AMCOR_2023_10K.pdf", [14])], {})
    assert "in_sources" not in fin_summary([ranked]), "only chop's records carry their sources"
    shown = [{**ranked, "in_sources": True}, {**ranked, "in_sources": False}]
    assert fin_summary(shown)["in_sources"] == 0.5


def test_fin_counts_a_byte_identical_copy_of_the_evidence_filing_as_that_filing() -> None:
    # the dev folder holds the same 8-K as "..._2022-07-01" and "..._dated-2022-07-01"
    question = FinQuestion("q", "Q?", "novel-generated", "Amcor", (("8K_dated-07-01", 2),))
    stems = {"/a/8K_07-01.pdf": "8K_07-01", "/a/8K_dated-07-01.pdf": "8K_dated-07-01"}
    copy = [fin_hit("/a/8K_07-01.pdf", [2])]
    assert fin_record(question, copy, stems)["doc_at_1"] is False
    same = {"8K_07-01": "8K_07-01", "8K_dated-07-01": "8K_07-01"}
    record = fin_record(question, copy, stems, same)
    assert record["doc_at_1"] is True and record["relevant"] == [True]


def test_natural_device_names_are_written_as_people_write_them() -> None:
    variants = name_variants("Galaxy Note 10+")
    assert variants["spacing"] == "Galaxy Note10+"
    assert variants["plus"] == "Galaxy Note 10 Plus"
    assert variants["hyphen"] == "Galaxy Note-10+"
    assert variants["no Galaxy"] == "Note 10+"
    assert variants["lower case"] == "galaxy note 10+"
    assert variants["no Galaxy+lower case"] == "note 10+"
    assert name_variants("Galaxy S10")["hyphen"] == "Galaxy S-10"
    assert "plus" not in name_variants("Galaxy S10")


def test_device_naming_questions_are_deterministic_and_name_every_manual() -> None:
    data = resolve_data(None)
    if not data.is_dir():
        pytest.skip(f"E-Manual QA data not found at {data} (set CHOP_EMANUAL_DATA)")
    rows, manuals = build_questions(data, seed=11)
    again, _ = build_questions(data, seed=11)
    assert rows == again
    assert {r["gold_doc"] for r in rows} == {m.doc_id for m in manuals}
    assert sum(r["named"] != r["device"] for r in rows) > 0.8 * len(rows)
    assert all(r["named"] in r["question"] for r in rows)


def test_names_and_collections() -> None:
    assert device_name(Path("s10_manual_corpus.json")) == "Galaxy S10"
    assert device_name(Path("smart_tv_remote_manual_corpus.json")) == "Samsung Smart TV remote"
    assert device_name(Path("Galaxy_Tab_A_10.1.json")) == "Galaxy Tab A 10.1"
    assert collection_name("pair", "naive") == "bench_pair_naive"
    assert collection_name("pair", "naive", structure="none") == "bench_pair_naive_txt"


def test_each_chop_variant_indexes_into_its_own_collection() -> None:
    default = Context(continuity_mode="gate", gate_low=GATE_BAND[0], gate_high=GATE_BAND[1])
    variants = [
        default,
        default.with_overrides(continuity_mode="llm"),
        default.with_overrides(gate_high=0.35),
        default.with_overrides(continuity_mode="rules", gate_high=0.35),
        default.with_overrides(joint_extraction=True),
    ]
    names = [collection_name("tv", "chop", chop_variant(v)) for v in variants]
    assert names[0] == "bench_tv_chop"  # the default: what bench.studies.retrieval_options reads
    assert names[2] == "bench_tv_chop_band_0_0_35"
    assert len(set(names)) == len(names)


# --------------------------------------------------------------------------- chunkers


class WordTokenizer:
    def token_spans(self, text: str) -> list[tuple[int, int]]:
        spans, start = [], None
        for i, ch in enumerate(text + " "):
            if ch.isspace() and start is not None:
                spans.append((start, i))
                start = None
            elif not ch.isspace() and start is None:
                start = i
        return spans


def test_cosine_chunking_splits_on_topic_shift_and_size() -> None:
    text = "Alpha one. Alpha two. Beta three. Beta four four four four."
    topics = {"Alpha": [1.0, 0.0], "Beta": [0.0, 1.0]}

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.array([topics.get(t.split()[0], topics["Beta"]) for t in texts])

    spans = cosine_spans(text, WordTokenizer(), embed, max_tokens=100)
    assert [text[s.start : s.end] for s in spans] == [
        "Alpha one. Alpha two.",
        "Beta three. Beta four four four four.",
    ]
    small = cosine_spans(text, WordTokenizer(), embed, max_tokens=4)
    assert [text[s.start : s.end] for s in small] == [
        "Alpha one. Alpha two.",
        "Beta three.",
        "Beta four four four",  # a sentence over the limit is cut into pieces
        "four.",
    ]
    units = sentence_units(text, WordTokenizer(), 4)
    assert [n for _, n in units] == [2, 2, 2, 4, 1]


# --------------------------------------------------------------------------- the harness


def test_missing_data_path_exits_2_with_one_message(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.emanual", "--subset", "tiny", "--data", str(missing)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and str(missing) in lines[0]


def test_data_path_default_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHOP_EMANUAL_DATA", raising=False)
    assert resolve_data(None) == DEFAULT_DATA
    monkeypatch.setenv("CHOP_EMANUAL_DATA", "/somewhere")
    assert resolve_data(None) == Path("/somewhere")
    assert resolve_data("/explicit") == Path("/explicit")


def bench_data_dir() -> Path:
    """The environment's CHOP_DATA_DIR, else a folder under /tmp (not the home folder)."""
    configured = os.environ.get("CHOP_DATA_DIR")
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / "chop-bench-test-data"


def test_tiny_subset_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = resolve_data(None)
    if not data.is_dir():
        pytest.skip(f"E-Manual QA data not found at {data} (set CHOP_EMANUAL_DATA)")
    monkeypatch.setenv("CHOP_DATA_DIR", str(bench_data_dir()))
    out = tmp_path / "results"
    code = main(["--subset", "tiny", "--methods", "naive,title_heading", "--out", str(out)])
    assert code == 0
    folder = out / "tiny"
    for name in ("results.json", "results.md", "chart.png"):
        assert (folder / name).stat().st_size > 0
    results = json.loads((folder / "results.json").read_text())
    assert list(results["methods"]) == [
        "naive",
        "title_heading",
        "naive (.txt)",
        "title_heading (.txt)",
    ]
    headed = results["methods"]["title_heading"]
    assert headed["retrieval"].startswith("plain vector search")
    assert results["settings"]["question_template"] == "[{device}] {question}"
    assert [m["device"] for m in results["corpus"]["manuals"]] == ["Galaxy S10", "Galaxy S9"]
    for method in results["methods"].values():
        assert method["costs"]["chunks"] > 0
        assert method["costs"]["llm_calls"] == 0
        assert len(method["per_question"]) == results["corpus"]["questions"] == 2
        for name, value in method["metrics"].items():
            if name != "questions":
                assert 0.0 <= value <= 1.0, name
        for bound in method["tie_bounds"].values():
            assert 0.0 <= bound["hit@10"] <= 1.0
        for record in method["per_question"]:
            assert len(record["top"]) <= 10
    table = (folder / "results.md").read_text()
    assert "| naive |" in table and "| title_heading (.txt) |" in table
    assert "LLM/chunk" in table and "index wall s" in table
    # the JSON path gives headings; the .txt copy does not
    store = store_for(Context())
    with_headings = store.chunks(headed["collection"])
    plain = store.chunks(results["methods"]["title_heading (.txt)"]["collection"])
    assert any(c["prefix"].count(" | ") == 2 for c in with_headings)
    assert all(c["prefix"].count(" | ") == 1 for c in plain)
