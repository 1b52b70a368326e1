"""What an answer is made of: passages read whole, and answers in the sources' own words."""

from __future__ import annotations

from typing import Any, cast

from chop_rag.answers.answering import (
    ANSWER_CHARS,
    UNSAID,
    Passage,
    build_passages,
    checked_verdict,
    compose,
    extract,
    filing_units,
    is_backed,
    is_yes_no_question,
    shown,
    sources_about,
    split_sentences,
)
from chop_rag.answers.passages import best_passage, content_indices
from chop_rag.state import Source


def source(number: int, text: str, *, doc: str = "m330", chunk: int = 0, **meta: Any) -> Source:
    return Source(
        number=number,
        chunk_id=number * 100 + chunk,
        doc_id=doc,
        doc_title=f"Coolwave {doc[1:]}",
        chunk_index=chunk,
        model=f"Coolwave {doc[1:]}",
        category=None,
        nouns=[],
        text=text,
        score=1.0 / number,
        metadata=meta,
    )


CLEANING = (
    "Clean the air filter every 4 weeks, or more often in dusty rooms.\n"
    "Switch the unit off and unplug it.\n"
    "Pull the filter grille upward and out of its guides.\n"
    "Rinse the filter in lukewarm water.\n"
    "Slide the grille back until it clicks."
)


def test_sentences_are_lines_and_sentences_even_when_extraction_glued_them() -> None:
    assert split_sentences(
        "Tap Settings.From Camera, tap Record. Then wait 2.5 s.\n- POWER: on"
    ) == [
        "Tap Settings.",
        "From Camera, tap Record.",
        "Then wait 2.5 s.",
        "- POWER: on",
    ]


def test_yes_no_questions_open_with_an_auxiliary_verb_after_any_device_name() -> None:
    assert is_yes_no_question("[Samsung Smart TV] Can I change the screen to grayscale?")
    assert is_yes_no_question("Does the S10 support wireless charging?")
    assert is_yes_no_question("Samsung Smart TV: Can I change the screen to grayscale?")
    assert is_yes_no_question("I have a Galaxy S10. Is there a one-handed mode?")
    assert not is_yes_no_question("How can I turn on the GPS?")
    assert not is_yes_no_question("What is the FY2019 inventory for Best Buy?")


def test_a_choice_between_two_directions_is_not_a_yes_no_question() -> None:
    assert not is_yes_no_question("Did wages as a percent of net sales increase or decrease?")
    assert not is_yes_no_question("Has the quick ratio improved or declined since FY2022?")
    assert not is_yes_no_question("Is the operating margin higher or lower than last year?")
    assert not is_yes_no_question("[Galaxy S10] Is Bluetooth on or off after a restart?")
    assert is_yes_no_question("Can I back up photos or videos to the cloud?")
    assert is_yes_no_question("Does the S10 support NFC or Bluetooth pairing?")
    assert is_yes_no_question("Did revenue increase in FY2022?")


def passage_of(text: str, number: int = 1, doc: str = "m330") -> Passage:
    return Passage(source(number, text, doc=doc), "Cleaning the air filter", text)


def test_a_short_section_is_quoted_whole_without_its_heading_line() -> None:
    passage = passage_of("## Cleaning the air filter\n" + CLEANING)
    assert extract(passage, [0.0] * 6) == " ".join(CLEANING.splitlines())


def test_a_long_section_is_quoted_from_its_best_sentence_on() -> None:
    padding = "\n".join(f"Note {n}: keep the unit level on a firm floor." for n in range(20))
    passage = passage_of(padding + "\n" + CLEANING)
    scores = [0.1] * 20 + [0.9, 0.2, 0.2, 0.2, 0.2]
    quoted = extract(passage, scores)
    assert quoted.startswith("Note 19") and "every 4 weeks" in quoted, "one sentence before"
    assert quoted.endswith("clicks."), "the steps that follow fit"
    assert len(quoted) <= ANSWER_CHARS


def test_another_passage_is_chosen_only_when_it_matches_clearly_better() -> None:
    passages = [passage_of("a"), passage_of("b", 2)]
    assert best_passage(passages, [[0.5], [0.55]]) == 0
    assert best_passage(passages, [[0.3], [0.55]]) == 1


def test_a_title_broken_over_lines_does_not_choose_the_passage() -> None:
    title = "Acme Announces Fourth Quarter Fiscal 2022 Results"
    release = Passage(
        source(2, "x"), title, "Acme Announces Fourth Quarter\nFiscal 2022 Results\nNet sales rose."
    )
    assert [release.sentences[i] for i in content_indices(release)] == ["Net sales rose."]
    answer = passage_of("The increase was due to 47 new stores.")
    assert best_passage([answer, release], [[0.5], [0.9, 0.9, 0.3]]) == 0, (
        "the title matches the question's company and period, not what it asks"
    )


def test_the_models_short_answer_is_shown_only_when_the_passage_backs_it() -> None:
    passage = passage_of(CLEANING)
    quoted = extract(passage, [0.0] * 5)
    backed = compose(passage, quoted, "Clean the air filter every 4 weeks", None)
    assert backed.text.startswith("Clean the air filter every 4 weeks")
    assert backed.lead == "none" or backed.lead == "backed"
    invented = compose(passage, quoted, "Open the Settings app and tap Filter care.", None)
    assert invented.lead == "unbacked" and "Settings" not in invented.text
    wrong_figure = compose(passage, quoted, "Clean the air filter every 6 weeks.", None)
    assert wrong_figure.lead == "unbacked" and "6 weeks" not in wrong_figure.text
    assert invented.citations == [1]


def test_a_backed_short_answer_leads_the_quote_unless_the_quote_already_says_it() -> None:
    passage = passage_of(CLEANING)
    quoted = extract(passage, [0.0] * 5)
    lead = compose(passage, quoted, "Rinse the filter in lukewarm water every 4 weeks", None)
    assert lead.lead == "backed"
    assert lead.text.startswith("Rinse the filter in lukewarm water every 4 weeks. Clean")
    repeated = compose(passage, quoted, "Rinse the filter in lukewarm water.", None)
    assert repeated.text == quoted, "the quote already says it"


def test_a_yes_no_answer_opens_with_the_verdict_then_the_reason() -> None:
    text = "Grayscale is available in Accessibility."
    passage = passage_of(text)
    answer = compose(passage, text, None, "yes")
    assert answer.text == "Yes. Grayscale is available in Accessibility."


HOME_SCREEN = (
    "Removing an item on the Home Screen.\n"
    "Move the focus to the app you want to delete, press the down button, then select Remove.\n"
    "The selected app is deleted."
)


def test_a_no_the_passage_does_not_say_becomes_yes_when_the_passage_describes_it() -> None:
    passage = passage_of(HOME_SCREEN)
    question = "Is it possible to remove an item from the home screen?"
    best = passage.sentences[:2]
    assert checked_verdict("no", "", question, passage, best) == ("yes", "overruled")
    assert checked_verdict("yes", "", question, passage, best) == ("yes", "backed")


def test_a_no_stands_where_the_passage_says_no() -> None:
    passage = passage_of("Voice guide is not available while Ambient Mode is on.")
    question = "Can I use the voice guide in Ambient Mode?"
    assert checked_verdict("no", "", question, passage, passage.sentences) == ("no", "backed")


def test_a_negative_question_is_answered_no_by_the_passage_s_positive_reason() -> None:
    passage = passage_of("Empty the water tank when the light shows, then refit it firmly.")
    question = "Can I run the unit without the water tank?"
    verdict = checked_verdict("no", "Refit it firmly.", question, passage, passage.sentences)
    assert verdict == ("no", "backed")


def test_no_verdict_is_given_from_a_passage_that_is_not_about_the_question() -> None:
    passage = passage_of(HOME_SCREEN)
    question = "Can I pay for apps with a PayPal account?"
    for said in ("yes", "no"):
        verdict, status = checked_verdict(said, "", question, passage, passage.sentences)
        assert (verdict, status) == (None, "unsaid")
    answer = compose(passage, HOME_SCREEN, None, None, unsaid=True)
    assert answer.text.startswith(UNSAID + " Removing an item")


def test_figures_and_words_back_an_answer_only_when_written_in_the_source() -> None:
    table = "Merchandise inventories 5,409 5,209\nTotal current assets 12,901 13,049"
    assert is_backed("Merchandise inventories were 5,409.", [table])
    assert not is_backed("Merchandise inventories were 5,490.", [table])
    assert not is_backed("The manual provides detailed instructions.", [table])


def test_the_prompt_shows_each_passage_under_its_document_and_section() -> None:
    text = shown([passage_of("One. Two."), passage_of("Three.", 2, doc="m410")])
    assert "--- Coolwave 330 > Cleaning the air filter ---\nOne. Two." in text
    assert "--- Coolwave 410 > Cleaning the air filter ---\nThree." in text


def test_only_sources_of_the_resolved_documents_are_kept_and_renumbered() -> None:
    sources = [source(1, "a", doc="m330"), source(2, "b", doc="m225"), source(3, "c", doc="m330")]
    kept = sources_about(sources, ["m330"], None)
    assert [(s["doc_id"], s["number"]) for s in kept] == [("m330", 1), ("m330", 2)]
    by_model = sources_about(sources, [], "coolwave 225")
    assert [s["doc_id"] for s in by_model] == ["m225"]
    assert sources_about(sources, [], None) == sources


def test_a_hit_is_read_with_the_rest_of_its_section_once() -> None:
    first = source(1, "Step one.", chunk=4, headings=["Cleaning"])
    second = source(1, "Step two.", chunk=5, headings=["Cleaning"])
    second["chunk_id"] = 105
    hits = [first, source(2, "Step two.", chunk=5, headings=["Cleaning"])]
    hits[1]["chunk_id"] = 105  # the same chunk as the section's second part

    def read_section(hit: Source) -> list[Source]:
        return [first, second]

    passages = build_passages(hits, read_section)
    assert len(passages) == 1, "the second hit lies in the first hit's section"
    assert passages[0].sentences == ["Step one.", "Step two."]
    assert passages[0].heading == "Cleaning"


def test_the_verdict_is_not_repeated_by_the_short_answer() -> None:
    text = "You can change the color of the TV screen to black and white."
    passage = passage_of(text)
    answer = compose(passage, text, "Yes, you can change the TV screen to black and white.", "yes")
    assert answer.text.startswith("Yes. You can change the TV screen")


def test_only_the_asking_sentence_says_what_a_passage_must_be_about() -> None:
    passage = passage_of("Dividends: during 2022 the quarterly cash dividend was $0.55 a share.")
    question = (
        "Has Coolwave paid dividends in 2022? If dividends are not a useful metric for a "
        "company like this, then state that and explain why."
    )
    assert checked_verdict("yes", "", question, passage, passage.sentences) == ("yes", "backed")


# ------------------------------------------------------------------ quotes of filings

SEGMENT_PAGE = """gment revenues, eliminated on consolidation and reported as a
single line. The Commercial Airplanes segment sells jetliners to airlines
worldwide. Revenue of the segment rose in 2022.
Years ended December 31, 2022 2021
Commercial Airplanes 25,867 19,493
Defense, Space & Security 23,162 26,540
Total segment revenues $ 66,608 $ 62,286
Our customers are airlines and governments that buy our aircr"""


def test_a_filing_quote_starts_and_ends_at_sentences_and_shows_rows_with_their_periods() -> None:
    from chop_rag.answers.figures import row_for_line, row_line, table_rows

    rows = table_rows(SEGMENT_PAGE, 1)

    def render(line: str) -> str | None:
        row = row_for_line(line, rows)
        return row_line(row) if row else None

    units = filing_units(SEGMENT_PAGE, render)
    assert units[0] == "The Commercial Airplanes segment sells jetliners to airlines worldwide."
    assert "Total segment revenues: 2022 66,608; 2021 62,286" in units
    assert units[-1] == "Total segment revenues: 2022 66,608; 2021 62,286", "a cut sentence goes"
    assert not any(unit.startswith("gment") for unit in units)
    assert all(unit[:1].isupper() for unit in units)


FAIR_VALUE_NOTE = """The following tables present information regarding the debt investments:

Fair value level June 30, 2023 December 31, 2022
(In thousands)
Short-term investments:
U.S. government securities Level 1 57,696 56,835
Corporate bonds Level 2 416,420 213,875
Total debt investments $ 509,921 $ 302,707"""


def test_a_tables_rows_that_do_not_render_are_still_quoted_as_its_lines() -> None:
    """A column between the label and the figures ("Level 2") keeps the rows from being read
    as a statement's; they are still the table the sentence above announces, line by line,
    and the last one is a row, not a sentence the passage cut."""
    units = filing_units(FAIR_VALUE_NOTE, lambda line: None)
    assert units[0].endswith("debt investments:")
    assert "Corporate bonds Level 2 416,420 213,875" in units
    assert units[-1] == "Total debt investments $ 509,921 $ 302,707"


def test_prose_that_wraps_after_a_date_and_a_line_of_years_are_not_table_rows() -> None:
    text = (
        "Average total VaR was flat for the three months ended June 30, 2023, when compared with\n"
        "March 31, 2023,\n"
        "reflecting increases in fixed income.\n"
        "2023 2022 2023 2022\n"
        "Net revenue by segment was as follows."
    )
    units = filing_units(text, lambda line: None)
    assert units[0] == (
        "Average total VaR was flat for the three months ended June 30, 2023, when compared "
        "with March 31, 2023, reflecting increases in fixed income."
    )
    assert "2023 2022 2023 2022" not in units


def test_a_filing_verdicts_reason_may_name_the_filing_its_title_names() -> None:
    """ "MGM Resorts" and "2022" are the filing's, not the row's: the row still states the
    reason."""
    text = "Dividends declared and paid to common shareholders ($0.01 per share) (4,789)"
    row = cast(Source, {**source(1, text), "doc_title": "MGM Resorts International 2022 10-K"})
    passage = Passage(row, "Consolidated Statements of Stockholders' Equity", text)
    question = "Has MGM Resorts paid dividends to common shareholders in FY2022?"
    reason = "Yes, MGM Resorts paid dividends to common shareholders in 2022."
    assert checked_verdict("yes", reason, question, passage, [text], True) == ("yes", "backed")
    elsewhere = Passage(source(1, "Repurchases of common stock (43,088)"), "Equity", "")
    assert checked_verdict("yes", reason, question, elsewhere, [], True) == (None, "unsaid")


def test_a_filing_verdict_stands_only_where_the_passage_writes_its_reason() -> None:
    text = (
        "The company's sales growth was 1.3% in FY2022. A disruption in financial markets "
        "could impair our banking partners."
    )
    passage = Passage(source(1, text), "Results", text)
    question = "Are the company's FY2022 financials those of a high growth company?"

    def said(verdict: str, reason: str) -> tuple[str | None, str]:
        return checked_verdict(verdict, reason, question, passage, [], True)  # type: ignore[arg-type]

    assert said("yes", "It is a fast grower.") == (None, "unsaid"), "not written there"
    assert said("yes", "A disruption in financial markets could impair our banking partners.") == (
        None, "unsaid"
    ), "written there, but not about what is asked"  # fmt: skip
    assert said("yes", "The company's sales growth was 1.3% in FY2022.") == ("yes", "backed")
    assert said("no", "The company's sales growth was 1.3% in FY2022.") == (None, "unsaid"), (
        "a no needs a negation"
    )


def test_a_quote_cites_every_retrieved_chunk_of_its_document_whose_sentence_it_quotes() -> None:
    """The passage is the section read around the first hit; the quote runs on into the
    section's next chunk, which retrieval also found (as the fifth source), so it cites both."""
    first = "Remove the filter cover by pressing the two tabs on its sides."
    second = "Rinse the filter in lukewarm water and let it dry for a full day."
    passage = passage_of(f"{first}\n{second}")
    sources = [
        passage.source,
        source(2, "Clean the water tank every week.", doc="m330"),
        source(3, second, doc="m225"),  # the twin manual's words: not what was quoted
        source(5, f"{second}\nPut the filter back.", doc="m330"),
    ]
    answer = compose(passage, f"{first} {second}", None, sources=sources)
    assert answer.citations == [1, 5]
    assert compose(passage, first, None, sources=sources).citations == [1], "not quoted: not cited"
    assert compose(passage, f"{first} {second}", None).citations == [1], "no sources given"


def test_a_quote_cites_the_chunk_that_holds_the_end_of_a_sentence_the_chunking_cut() -> None:
    sentence = (
        "The $104.2 million increase was primarily due to the opening of 47 new stores, "
        "inventory to support new brand launches, and inventory cost increases."
    )
    cut = sentence.index("inventory to support")
    passage = passage_of(sentence)
    sources = [
        source(1, "Merchandise inventories rose. " + sentence[:cut]),
        source(2, sentence[cut:] + "\nShare Repurchase Program"),
        source(3, "increases."),  # a piece too short to tell
    ]
    assert compose(passage, sentence, None, sources=sources).citations == [1, 2]
