"""Question resolution: a question read (chop_rag.questions.facts) and typed cards in, one
Resolution out (chop_rag.questions.matching).

Each rule is specified on invented companies in the style of a dev filing (Best Buy, Amcor,
MGM Resorts, CVS-like calendar years) and of a wide one (Ulta Beauty's retail year, JPMorgan's
10-Qs, American Express, Adobe's change of name)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

import pytest

from chop_rag.labelling.cards import DocumentCard, card_from_stored, read_cards
from chop_rag.labelling.identity import merge_cards
from chop_rag.questions.facts import read_question
from chop_rag.questions.matching import Resolution, match_question, resolve, without_names
from chop_rag.text.names import abbreviates


def cards(**stored: dict[str, Any]) -> list[DocumentCard]:
    """Stored cards as retrieval reads them (merged, typed, completed)."""
    return read_cards(
        card_from_stored(doc_id, merge_cards(card)) for doc_id, card in stored.items()
    )


def resolved(question: str, collection: Sequence[DocumentCard]) -> Resolution:
    """``question`` as retrieval resolves it: read, then matched against the cards."""
    return resolve(read_question(question), collection)


def ten_k(entity: str, year: int, **more: Any) -> dict[str, Any]:
    return {"kind": "10-K", "entity": entity, "fiscal_year": year, **more}


def ten_q(entity: str, year: int, quarter: int) -> dict[str, Any]:
    return {"kind": "10-Q", "entity": entity, "fiscal_year": year, "fiscal_quarter": quarter}


# ------------------------------------------------------------------ products

MANUALS = [
    DocumentCard(name, product_model=name, kind="user manual")
    for name in ["Galaxy Note 10", "Galaxy Note 10+", "Galaxy S9", "Galaxy S9+", "Galaxy S7",
                 "Galaxy S7 Edge", "Galaxy Tab A 10.1", "Galaxy Z Flip"]
]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("How do I charge my Note10?", "Galaxy Note 10"),
        ("galaxy note-10 plus battery", "Galaxy Note 10+"),
        ("S9 Plus camera", "Galaxy S9+"),
        ("S9 camera", "Galaxy S9"),
        ("Galaxy S7 battery", "Galaxy S7"),
        ("my s7 edge screen", "Galaxy S7 Edge"),
        ("Tab A 10.1 wifi", "Galaxy Tab A 10.1"),
        ("z flip hinge", "Galaxy Z Flip"),
    ],
)
def test_model_names_match_however_they_are_written(question: str, document: str) -> None:
    resolution = resolved(question, MANUALS)
    assert resolution.documents == (document,)
    assert resolution.product_model == document and resolution.company is None


# ------------------------------------------------------------------ periods a question names


def test_questions_name_periods_in_many_ways() -> None:
    periods = read_question("Change between FY2021 and fiscal 2022, and in Q2 of FY2023?").periods
    assert {(p.fiscal_year, p.fiscal_quarter) for p in periods} == {
        (2021, None), (2022, None), (2023, 2)
    }  # fmt: skip
    assert read_question("as of May 26, 2023").periods[0].day == date(2023, 5, 26)
    assert read_question("the 8k dated 1st July 2022").periods[0].day == date(2022, 7, 1)
    assert read_question("H1 FY23 cash").periods[0].fiscal_quarter == 2
    assert read_question("in its latest 10-Q").kinds == ["10-Q"]


def test_quarters_written_with_a_plain_year_are_read() -> None:
    def quarters(text: str) -> list[tuple[int | None, int | None]]:
        return [(p.fiscal_year, p.fiscal_quarter) for p in read_question(text).periods]

    assert quarters("which segment had the lowest net revenue in 2021 Q1?") == [(2021, 1)]
    assert quarters("did VaR fall in the second fiscal quarter of 2023?") == [(2023, 2)]
    assert quarters("net income in Q3 2022") == [(2022, 3)]


def test_a_bare_year_is_kept_apart_from_fiscal_periods() -> None:
    facts = read_question("What are the geographies it operates in as of 2022?")
    assert facts.periods == [] and facts.bare_years == [2022]
    facts = read_question("As of FY 2021, how much did it expect to pay in 2024?")
    assert [p.fiscal_year for p in facts.periods] == [2021] and facts.bare_years == [2024]
    assert read_question("a $2023 million charge, 2,023 stores").bare_years == []


# ------------------------------------------------------------------ companies

ACME = {
    f"acme-{y}": ten_k("Acme Widgets Co., Inc.", y, tickers=["ACW"]) for y in (2021, 2022, 2023)
}
ZENITH = {"zenith-2022": ten_k("Zenith Packaging PLC", 2022, tickers=["ZNT"])}
THE_CO = {"lantern-2022": ten_k("The Lantern Company", 2022)}


def test_a_company_is_named_by_its_name_short_name_or_ticker() -> None:
    collection = cards(**ACME, **ZENITH)
    assert resolved("Acme Widgets revenue in FY2022?", collection).documents == ("acme-2022",)
    assert resolved("ACW revenue in FY2022?", collection).documents == ("acme-2022",)
    assert resolved("What does Zenith Packaging make?", collection).documents == ("zenith-2022",)
    assert resolved("ZNT's debt in FY2022", collection).company == "Zenith Packaging"


def test_a_ticker_names_a_company_only_when_written_in_capitals() -> None:
    collection = cards(**ZENITH, **{"hill-2022": ten_k("Hill Corp", 2022, tickers=["ALL"])})
    assert resolved("Did ALL pay a dividend in FY2022?", collection).documents == ("hill-2022",)
    assert resolved("Did all segments grow in FY2022?", collection).company is None


def test_the_article_of_a_registrant_name_names_nothing() -> None:
    collection = cards(**THE_CO, **ZENITH)
    assert resolved("What does the company make in FY2022?", collection).company is None
    assert resolved("THE capex in FY2022?", collection).company is None
    assert resolved("Lantern's capex in FY2022?", collection).documents == ("lantern-2022",)


def test_a_company_with_a_digit_in_its_name_is_found() -> None:
    collection = cards(**{"three-2022": ten_k("3M Company", 2022)}, **ZENITH)
    assert resolved("What was 3M's free cash flow in FY2022?", collection).documents == (
        "three-2022",
    )


def test_an_abbreviation_of_the_companys_words_names_it_when_nothing_else_does() -> None:
    assert abbreviates("AMEX", "American Express") and abbreviates("NOREX", "Nordic Express")
    assert not abbreviates("AE", "American Express"), "too short"
    assert not abbreviates("FCF", "First Citizens Financial"), "initials are finance acronyms"
    collection = cards(**{"amx-2022": ten_k("Atlantic Express Company", 2022)}, **ZENITH)
    assert resolved("Does ATEX have an improving margin as of 2022?", collection).documents == (
        "amx-2022",
    )


def test_a_distinctive_first_word_names_a_company_whose_filings_change_its_name() -> None:
    collection = cards(
        old=ten_k("Acme Systems Incorporated", 2015),
        new=ten_k("Zenith Packaging PLC", 2022),
    )
    assert resolved("What is the FY2015 cash ratio for Acme?", collection).documents == ("old",)
    assert resolved("What is the FY2015 cash ratio?", collection).company is None


# ------------------------------------------------------------------ periods matched to documents


def test_a_filing_question_resolves_by_company_and_latest_period() -> None:
    collection = cards(
        **ACME,
        **ZENITH,
        **{"acme-q": ten_q("Acme Widgets Co., Inc.", 2024, 2)},
    )
    compared = resolved("Did Acme Widgets margins grow between FY2021 and FY2023?", collection)
    assert compared.documents == ("acme-2023",)  # the latest report holds both years
    assert resolved("Acme Widgets stores in Q2 of FY2024?", collection).documents == ("acme-q",)
    latest = resolved("What industry is Acme Widgets in?", collection)
    assert latest.documents == ("acme-2023",), "no period named: the latest annual report"
    assert latest.secondary == ("acme-q",), "later quarterly reports stay candidates"
    assert latest.label == "Acme Widgets FY2023 (latest)"


def test_a_fiscal_year_is_answered_from_its_annual_report_before_its_earnings_release() -> None:
    collection = cards(
        **ACME,
        **{"acme-2023-q4": {"kind": "earnings release", "entity": "Acme Widgets",
                            "fiscal_year": 2023, "fiscal_quarter": 4}},
    )  # fmt: skip
    year = resolved("Did Acme Widgets grow its gross margin in FY2023?", collection)
    assert (year.documents, year.secondary) == (("acme-2023",), ("acme-2023-q4",))
    release = resolved("What did the Acme Widgets earnings release say for FY2023?", collection)
    assert (release.documents, release.secondary) == (("acme-2023-q4",), ())


@pytest.mark.parametrize(
    ("stored", "question", "document"),
    [
        pytest.param(  # CVS-style
            {f"hale-{y}": ten_k("Hale Health Corporation", y) for y in (2018, 2022)},
            "Did Hale Health pay dividends in Q2 of FY2022?",
            "hale-2022",
            id="a-quarter-without-its-10q-is-read-in-the-annual-report",
        ),
        pytest.param(
            ACME | {"acme-2024q1": ten_q("Acme Widgets Co., Inc.", 2024, 1)},
            "How did Acme Widgets' margin develop in FY2024?",
            "acme-2024q1",
            id="a-year-covered-only-by-10qs-resolves-to-them",
        ),
    ],
)
def test_a_period_without_a_report_of_its_own_is_read_in_one_that_covers_it_not_declined(
    stored: dict[str, dict[str, Any]], question: str, document: str
) -> None:
    resolution = resolved(question, cards(**stored))
    assert resolution.documents == (document,) and resolution.unknown is None


def test_a_year_named_by_its_end_finds_the_retail_year_that_ends_in_january() -> None:
    release = {"kind": "earnings release", "entity": "Lumen Beauty", "tickers": ["LUMN"]}
    collection = cards(
        q4=release | {"fiscal_year": 2022, "fiscal_quarter": 4, "period_end": "2023-01-28"},
        q1=release | {"fiscal_year": 2023, "fiscal_quarter": 1, "period_end": "2023-04-29"},
    )  # Ulta-style: "Fourth Quarter Fiscal 2022" ended January 28, 2023
    assert resolved("Lumen Beauty inventories at end of FY2023?", collection).documents == ("q4",)
    assert resolved("Lumen Beauty sales in FY2022?", collection).documents == ("q4",)
    assert resolved("Lumen Beauty sales in Q1 of FY2023?", collection).documents == ("q1",)


def test_a_quarter_written_with_a_plain_year_finds_its_10q() -> None:
    quarterly = {"kind": "10-Q", "entity": "JPMorgan Chase & Co.", "tickers": ["JPM"]}
    collection = cards(
        q1=quarterly | {"fiscal_year": 2021, "fiscal_quarter": 1},
        q2=quarterly | {"fiscal_year": 2022, "fiscal_quarter": 2},
    )  # wide-style: the ticker and "2021 Q1"
    assert resolved("Which of JPM's segments was smallest in 2021 Q1?", collection).documents == (
        "q1",
    )


def test_a_period_no_document_covers_is_reported() -> None:
    resolution = resolved("Acme Widgets revenue in FY2030?", cards(**ACME))
    assert resolution.unknown == "FY2030"
    assert "no document covers FY2030" in resolution.why


def test_a_bare_year_narrows_but_is_never_declined() -> None:
    collection = cards(**ACME)
    assert resolved("Acme Widgets geographies as of 2022?", collection).documents == ("acme-2022",)
    beyond = resolved("How much does Acme Widgets expect to pay in 2030?", collection)
    assert beyond.unknown is None and beyond.documents == ("acme-2023",)


def test_the_topic_is_the_question_without_the_names_of_its_documents() -> None:
    collection = cards(**ACME)
    assert resolved("What was ACW's revenue in FY2023?", collection).topic == (
        "What was revenue in FY2023?"
    )


# ------------------------------------------------------------------ the topic left to search

TV = DocumentCard("tv", kind="user manual", product_model="Smart tv remote")
S10 = DocumentCard("s10", product_model="S10")
BEST_BUY = DocumentCard("bby", kind="10-K", entity="Best Buy", names=("Best Buy",),
                        acronyms=("BBY",))  # fmt: skip


def test_the_words_that_name_the_document_leave_the_query_with_the_brand_before_them() -> None:
    assert without_names("[Samsung Smart TV remote] How do I mute?", [TV]) == "How do I mute?"
    assert without_names("I have a Galaxy S10. How do I reset it?", [S10]) == (
        "I have a How do I reset it?"
    )
    assert without_names("What was BBY's revenue in FY2023?", [BEST_BUY]) == (
        "What was revenue in FY2023?"
    )
    assert without_names("What was Best Buy revenue?", [BEST_BUY]) == "What was revenue?"


def test_a_capitalised_question_word_before_a_name_is_not_taken_for_its_brand() -> None:
    assert without_names("Does S10 support wireless charging?", [S10]) == (
        "Does support wireless charging?"
    )
    assert without_names("How do I reset my Samsung S10?", [S10]) == "How do I reset my"


def test_a_word_that_is_only_part_of_a_name_stays_a_topic_word() -> None:
    question = "[Smart TV remote] How do I pair the remote with the TV?"
    assert without_names(question, [TV]) == "How do I pair the remote with the TV?"


def test_a_question_that_is_only_a_name_is_kept_whole() -> None:
    assert without_names("Galaxy S10", [S10]) == "Galaxy S10"


def test_a_non_gaap_measure_is_looked_up_in_the_earnings_release_first() -> None:
    collection = cards(
        **ACME,
        **{"acme-2023-q4": {"kind": "earnings release", "entity": "Acme Widgets",
                            "fiscal_year": 2023, "fiscal_quarter": 4}},
    )  # fmt: skip  # dev-style: MGM's and Amcor's Q4 releases next to their 10-Ks
    adjusted = resolved("What was Acme Widgets' Adjusted EBITDA for FY2023?", collection)
    assert (adjusted.documents, adjusted.secondary) == (("acme-2023-q4",), ("acme-2023",))
    gaap = resolved("Acme Widgets' unadjusted operating income in FY2023?", collection)
    assert gaap.documents == ("acme-2023",)
    assert read_question("EBITDAR by region, FY2022").release_measure


def test_a_first_word_opening_the_question_names_a_company_only_as_a_possessive() -> None:
    collection = cards(old=ten_k("Acme Systems Incorporated", 2015), new=ten_k("Zenith PLC", 2022))
    assert resolved("Acme's FY2015 cash ratio?", collection).documents == ("old",)
    assert resolved("Acme FY2015 cash ratio?", collection).company is None


# ------------------------------------------------------------------ brands and product lines

TWINS = [
    DocumentCard(name, product_model=name, kind="user manual")
    for name in ["Coolwave 225B", "Coolwave 410X", "Breeze 330C", "Breeze 225B", "Q9X"]
]


@pytest.mark.parametrize(
    ("question", "documents"),
    [
        ("How often do I clean the filter of the Breeze 330C?", ("Breeze 330C",)),
        ("How often do I clean the filter of the breeze-330c?", ("Breeze 330C",)),
        ("How often do I clean the filter of the Coolwave 225B?", ("Coolwave 225B",)),
        ("How often do I clean the filter of the 330C?", ("Breeze 330C",)),  # no line written
        ("Is the Coolwave Q9X quiet?", ("Q9X",)),  # a name with no brand is any line's
    ],
)
def test_a_model_is_named_with_its_own_brand_or_without_one(
    question: str, documents: tuple[str, ...]
) -> None:
    assert resolved(question, TWINS).documents == documents


def test_a_model_number_of_another_brand_is_another_product() -> None:
    """The collection has the 330C only as a Breeze: a question about the Coolwave 330C does
    not boost the Breeze manual, and says which product no document covers."""
    resolution = resolved("How often do I clean the filter of the Coolwave 330C?", TWINS)
    assert resolution.documents == () and resolution.product_model is None
    models = [c.product_model for c in TWINS if c.product_model]
    question = read_question("How often do I clean the filter of the Coolwave 330C?")
    matched = match_question(question, models, [])
    assert matched.model is None and matched.unknown_model == "Coolwave 330C"
    # the same number in the line the question writes is matched as before
    same_line = read_question("Is the Breeze 330C quiet?")
    assert match_question(same_line, models, []).model == "Breeze 330C"


def listed_in(question: str, texts: dict[str, str]) -> dict[str, set[str]]:
    """What the store's documents_listing says: each word the resolution asks about, and the
    documents whose text (here ``texts``, doc_id -> text) holds it."""
    from chop_rag.questions.codes import listing_words

    words = listing_words(read_question(question))
    found = {w: {d for d, text in texts.items() if w in text.lower().split()} for w in words}
    return {w: docs for w, docs in found.items() if docs}


def resolved_with_text(
    question: str, collection: Sequence[DocumentCard], texts: dict[str, str]
) -> Resolution:
    return resolve(read_question(question), collection, listed_in(question, texts))


BREEZE_ONLY = [DocumentCard("breeze", product_model="Breeze 330C", kind="user manual")]


@pytest.mark.parametrize(
    "question",
    ["How often do I clean the filter of the Coolwave 330C?", "Is the Frostline 330C quiet?",
     "my Coolwave 330c leaks, what do I do?"],
)  # fmt: skip
def test_a_brand_no_document_holds_before_a_stored_model_number_is_another_product(
    question: str,
) -> None:
    resolution = resolved_with_text(question, BREEZE_ONLY, {"breeze": "the breeze 330c manual"})
    assert resolution.documents == () and resolution.unknown is not None
    assert resolution.unknown.lower().endswith("330c")
    assert resolution.unknown.split()[0] in question
    assert "closest is Breeze 330C" in " ".join(resolution.why)


def test_a_maker_the_documents_name_before_the_model_is_not_another_brand() -> None:
    phones = [DocumentCard("s10", product_model="Galaxy S10", kind="user manual")]
    text = {"s10": "sign in to your samsung account"}
    resolution = resolved_with_text("How do I reset my Samsung Galaxy S10?", phones, text)
    assert resolution.documents == ("s10",) and resolution.unknown is None


def test_a_bare_model_number_of_several_brands_is_ambiguous() -> None:
    both = [*BREEZE_ONLY, DocumentCard("cool", product_model="Coolwave 330C", kind="user manual")]
    texts = {"breeze": "breeze 330c", "cool": "coolwave 330c"}
    resolution = resolved_with_text("How often do I clean the filter of the 330C?", both, texts)
    assert resolution.documents == ()
    assert set(resolution.ambiguous) == {"Breeze 330C", "Coolwave 330C"}
    assert resolution.label == "330C"
    named = resolved_with_text("How often do I clean the filter of the Coolwave 330C?", both, texts)
    assert named.documents == ("cool",) and not named.ambiguous


AIRCON = [
    DocumentCard(doc, product_model=name, kind="user manual")
    for doc, name in (("a", "Coolwave 225B"), ("b", "Coolwave 410X"), ("c", "Breeze 330C"))
]
AIRCON_TEXT = {
    "a": "e1 means a sensor fault . e2 means the drain pump has failed . ch05 filter",
    "b": "e1 means a sensor fault . e5 means the compressor overheated",
    "c": "e1 means a sensor fault . 4c is the fan speed setting",
}


@pytest.mark.parametrize(
    ("question", "documents"),
    [
        ("What does error E2 mean?", ("a",)),
        ("my unit shows CH05, what now", ("a",)),
        ("What is setting 4C for?", ("c",)),
        ("What does E1 mean?", ()),  # every manual lists it: no narrowing
        ("What does error E2 mean on the Coolwave 225B?", ("a",)),
    ],
)
def test_a_code_is_read_as_what_the_manuals_that_list_it_are_about(
    question: str, documents: tuple[str, ...]
) -> None:
    resolution = resolved_with_text(question, AIRCON, AIRCON_TEXT)
    assert resolution.documents == documents and resolution.unknown is None


def test_a_code_the_named_models_manual_does_not_list_is_not_covered() -> None:
    resolution = resolved_with_text("What does error E2 mean on the Coolwave 410X?", AIRCON,
                                    AIRCON_TEXT)  # fmt: skip
    assert resolution.unknown == "E2 in the Coolwave 410X manual"


def test_a_model_number_after_a_line_word_stays_a_model_even_if_unknown() -> None:
    """ "Coolwave 999Z" is a model the collection lacks, not a code (matching reports it)."""
    resolution = resolved_with_text("How do I clean the Coolwave 999Z?", AIRCON, AIRCON_TEXT)
    assert resolution.documents == () and resolution.unknown is None
    models = [c.product_model for c in AIRCON if c.product_model]
    assert match_question(read_question("How do I clean the Coolwave 999Z?"), models,
                          []).unknown_model == "999Z"  # fmt: skip


# ------------------------------------------------------------------ forecasts, events, quarters

JETS = {
    f"jet-{y}": ten_k("Orbital Aerospace Corporation", y, period_end=f"{y}-12-31")
    for y in (2020, 2021, 2022)
} | {
    "jet-2023q1": {
        "kind": "10-Q", "entity": "Orbital Aerospace Corporation", "fiscal_year": 2023,
        "fiscal_quarter": 1, "period_end": "2023-03-31",
    },
    "jet-8k-ceo": {"kind": "8-K", "entity": "Orbital Aerospace Corporation", "date": "2022-08-15"},
    "jet-8k-vote": {"kind": "8-K", "entity": "Orbital Aerospace Corporation", "date": "2021-05-04"},
}  # fmt: skip


@pytest.mark.parametrize(
    "question",
    [
        "What production rate changes is Orbital Aerospace forecasting for FY2024?",
        "What is Orbital's revenue guidance for fiscal 2024?",
        "What outlook did Orbital Aerospace give for 2024?",
        "How many deliveries does Orbital Aerospace expect in FY2024?",
        "What capex does Orbital Aerospace plan to spend in FY24?",
    ],
)
def test_a_forecast_for_the_next_year_is_read_in_the_latest_filing_not_declined(
    question: str,
) -> None:
    resolution = resolved(question, cards(**JETS))
    assert resolution.unknown is None
    assert resolution.documents == ("jet-2023q1",), "the latest filing before the year asked"
    assert "jet-2022" in resolution.secondary, "the latest annual report stays in view"


def test_a_forecast_falls_back_to_the_year_before_when_only_annual_reports_exist() -> None:
    annual = {k: v for k, v in JETS.items() if v["kind"] == "10-K"}
    resolution = resolved("What is Orbital Aerospace forecasting for FY2023?", cards(**annual))
    assert resolution.documents == ("jet-2022",) and resolution.unknown is None


def test_a_past_year_asked_without_forecast_words_is_still_declined() -> None:
    assert resolved("Orbital Aerospace revenue in FY2030?", cards(**JETS)).unknown == "FY2030"


@pytest.mark.parametrize(
    "question",
    [
        "How much does Orbital Aerospace expect to pay in the future for its leases?",
        "What are Orbital Aerospace's future payments under its purchase obligations?",
        "What does Orbital Aerospace anticipate for its pension contributions?",
    ],
)
def test_what_a_company_expects_without_a_year_is_read_in_its_latest_filing(
    question: str,
) -> None:
    resolution = resolved(question, cards(**JETS))
    assert resolution.documents == ("jet-2023q1",) and "jet-2022" in resolution.secondary


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("Who did Orbital Aerospace appoint as its new CEO in FY2022?", "jet-8k-ceo"),
        ("Did Orbital Aerospace's chief financial officer resign in 2022?", "jet-8k-ceo"),
        ("What were the results of Orbital Aerospace's shareholder vote in FY2021?", "jet-8k-vote"),
        ("Which proposals did Orbital Aerospace stockholders approve at the 2021 annual meeting?",
         "jet-8k-vote"),
    ],
)  # fmt: skip
def test_an_event_question_reads_the_8k_of_its_period_first(question: str, document: str) -> None:
    resolution = resolved(question, cards(**JETS))
    assert resolution.documents[0] == document
    assert any(d.startswith("jet-20") for d in resolution.secondary), "reports stay in view"


def test_an_event_question_without_a_period_reads_the_latest_8k_first() -> None:
    resolution = resolved("Who is Orbital Aerospace's new chief executive officer?", cards(**JETS))
    assert resolution.documents == ("jet-8k-ceo", "jet-8k-vote")


def test_a_question_that_is_not_about_an_event_keeps_the_annual_report() -> None:
    for question in (
        "Has Orbital Aerospace paid dividends to shareholders in FY2022?",
        "What were Orbital Aerospace's major acquisitions in FY2022?",
        "How much did Orbital Aerospace pay its officers in FY2022?",
    ):
        assert resolved(question, cards(**JETS)).documents == ("jet-2022",), question


@pytest.mark.parametrize(
    "period",
    ["Q1 FY23", "FY2023Q1", "1Q23", "Q1'2023", "Q12023", "Q1 2023", "first quarter of 2023",
     "the three months ended March 31, 2023", "2023 Q1"],
)  # fmt: skip
def test_a_quarter_however_written_finds_its_10q_not_the_previous_annual_report(
    period: str,
) -> None:
    resolution = resolved(f"As of {period}, what was Orbital Aerospace's cash?", cards(**JETS))
    assert resolution.documents == ("jet-2023q1",)


def test_a_half_finds_the_report_that_covers_six_months() -> None:
    collection = cards(
        h1={"kind": "10-Q", "entity": "Orbital Aerospace Corporation", "fiscal_year": 2023,
            "fiscal_quarter": 2, "period_end": "2023-06-30"},
        **{k: v for k, v in JETS.items() if k == "jet-2022"},
    )  # fmt: skip
    for period in ("H1 2023", "1H23", "the first half of 2023", "six months ended June 30, 2023"):
        question = f"Orbital Aerospace's short-term investments in {period}?"
        assert resolved(question, collection).documents == ("h1",), period
