"""Document identity: cards read from files, and questions resolved to documents without an LLM."""

from __future__ import annotations

import pytest

from chop_rag.labelling.cards import DocumentCard, card_from_stored, read_cards
from chop_rag.labelling.identity import (
    cover_ticker,
    identity_from_file_name,
    identity_from_text,
    label,
    merge_cards,
    registrant,
)
from chop_rag.text.names import entity_aliases, is_identifier, short_name
from chop_rag.types import user_card

TEN_K_COVER = """UNITED STATES SECURITIES AND EXCHANGE CO MMISSION Washington, D.C. 20549
FORM 10-K ☒ ANNUAL REPORT PURS UANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT
OF 1934 For the fiscal year ended January 30 , 2021 OR ☐ TRANSITION REPORT
Commission file number 1-4321 ACME WIDGETS CO., INC. (Exact name of registrant as specified
in its charter) Delaware 41-0000000"""

TEN_Q_COVER = """FORM 10-Q QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) For the quarterly period
ended December 31, 2022 Commission File Number 001-0000 ZENITH PACKAGING PLC (Exact name of
Registrant as specified in its charter) ... Three Months Ended ... Six Months Ended"""

EIGHT_K_COVER = """FORM 8-K CURRENT REPORT Date of Report (Date of earliest event reported): July 1,
2022 (June 30, 2022) ZENITH PACKAGING PLC (Exact name of registrant as specified in its charter)"""

PRESS_RELEASE = """Exhibit 99.1 ACME WIDGETS REPORTS FOURTH QUARTER AND FULL YEAR 2022 RESULTS
MINNEAPOLIS, March 2, 2023 -- Acme Widgets Co., Inc. (NYSE: ACW) today announced results for
the fourth quarter ended January 28, 2023 ("Q4 FY23")."""


def test_a_10k_cover_gives_company_form_and_fiscal_year_despite_split_words() -> None:
    card = identity_from_text(TEN_K_COVER)
    assert card["kind"] == "10-K"
    assert card["entity"] == "Acme Widgets Co., Inc."
    assert card["fiscal_year"] == 2021 and card["period_end"] == "2021-01-30"
    assert label(merge_cards(card)) == "Acme Widgets 10-K FY2021"


def test_a_10q_cover_gives_the_quarter_and_a_sibling_annual_report_the_fiscal_year() -> None:
    quarterly = merge_cards(identity_from_text(TEN_Q_COVER))
    assert quarterly["kind"] == "10-Q" and quarterly["fiscal_quarter"] == 2
    assert "fiscal_year" not in quarterly  # December is not the fiscal year's end everywhere
    annual = merge_cards(
        {"kind": "10-K", "entity": "Zenith Packaging PLC", "period_end": "2022-06-30",
         "fiscal_year": 2022}
    )  # fmt: skip
    read = read_cards([card_from_stored("q", quarterly), card_from_stored("k", annual)])
    assert read[0].fiscal_year == 2023  # the year that ends June 30, 2023
    assert read[0].filing_label == "Zenith Packaging 10-Q Q2 FY2023"


def test_an_8k_and_a_press_release_are_dated_and_named() -> None:
    current = identity_from_text(EIGHT_K_COVER)
    assert current["kind"] == "8-K" and current["date"] == "2022-07-01"
    release = merge_cards(identity_from_text(PRESS_RELEASE))
    assert release["kind"] == "earnings release"
    assert (release["fiscal_year"], release["fiscal_quarter"]) == (2023, 4)
    assert release["tickers"] == ["ACW"], "a ticker has its own field, apart from names"


def test_file_names_carry_period_and_form() -> None:
    card = identity_from_file_name("/data/ACME_2023Q2_10Q.pdf")
    assert (card["kind"], card["fiscal_year"], card["fiscal_quarter"]) == ("10-Q", 2023, 2)
    assert identity_from_file_name("ACME_8K_dated-2022-07-01.pdf")["date"] == "2022-07-01"
    assert "fiscal_year" not in identity_from_file_name("Galaxy_S10.json")


def test_what_a_user_sets_wins_and_unknown_fields_are_refused() -> None:
    card = merge_cards(user_card({"fiscal_year": "2020"}), identity_from_text(TEN_K_COVER))
    assert card["fiscal_year"] == 2020 and card["sources"]["fiscal_year"] == "user"
    with pytest.raises(ValueError, match="unknown identity field"):
        user_card({"colour": "red"})


def test_company_aliases_are_what_people_write() -> None:
    assert entity_aliases("Best Buy Co., Inc.") == ["Best Buy"]
    assert "MGM" in entity_aliases("MGM Resorts International")
    assert {"J&J", "JnJ"} <= set(entity_aliases("Johnson & Johnson"))


# ------------------------------------------------------------------ registrant names of any shape
# Cover pages in the style of the dev filings (Best Buy, Amcor, MGM Resorts) and the wide ones
# (American Express, JPMorgan, Ulta Beauty, Adobe, Nike), with names of invented companies.


def cover(name: str, tail: str = "") -> str:
    return (
        "FORM 10-K ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) For the fiscal year ended "
        f"December 31, 2022 Commission File No. 1-7657 {name} (Exact name of registrant as "
        f"specified in its charter) New York 13-4922250 {tail}"
    )


def test_a_registrant_that_starts_with_an_article_is_not_named_the() -> None:
    card = merge_cards(identity_from_text(cover("THE ACME WIDGET COMPANY")))
    assert card["entity"] == "The Acme Widget Company"
    assert card["aliases"] == ["Acme Widget"], "no 'THE' alias: it would name every question"


def test_registrant_names_with_digits_ampersands_and_mixed_case_are_read() -> None:
    assert registrant(cover("3M COMPANY")) == "3M Company"
    assert registrant(cover("JPMorgan Chase & Co.")) == "JPMorgan Chase & Co."  # wide style
    assert registrant(cover("American Express Company")) == "American Express Company"
    assert registrant(cover("MGM R ESORTS INTERNATIONAL")) == "MGM Resorts International"  # dev
    assert entity_aliases("JPMorgan Chase & Co.")[0] == "JPMorgan Chase"
    assert entity_aliases("3M Company") == ["3M"]


def test_the_commission_file_number_before_the_name_is_not_part_of_it() -> None:
    assert registrant(cover("ACME WIDGETS CO., INC.")) == "Acme Widgets Co., Inc."
    assert registrant("Commission file number 1-4321 ____ ZENITH PLC (Exact name of registrant")
    assert registrant("number: 001-01011 ZENITH HEALTH CORPORATION (Exact name of Registrant") == (
        "Zenith Health Corporation"
    )


TRADING_TABLE = (
    "Securities registered pursuant to Section 12(b) of the Act: Title of each class Trading "
    "Symbol(s) Name of each exchange on which registered Common Stock, par value $0.10 ZNT New "
    "York Stock Exchange 1.625% Notes due 2024 ZNT24B New York Stock Exchange"
)


def test_the_cover_trading_symbol_table_gives_the_common_stock_ticker() -> None:
    assert cover_ticker(TRADING_TABLE) == "ZNT"  # Verizon-style rows with notes after it
    row_first = (  # Nike-style: the row comes before the column headings
        "SECURITIES REGISTERED PURSUANT TO SECTION 12(B) OF THE ACT: Class B Common Stock ACW "
        "New York Stock Exchange (Title of each class) (Trading symbol) (Name of each exchange)"
    )
    assert cover_ticker(row_first) == "ACW"
    card = merge_cards(identity_from_text(cover("ZENITH PACKAGING PLC", TRADING_TABLE)))
    assert card["tickers"] == ["ZNT"]


def test_a_52_53_week_year_that_ends_in_early_january_is_the_year_before() -> None:
    early = identity_from_text(TEN_K_COVER.replace("January 30 , 2021", "January 2, 2022"))
    assert early["fiscal_year"] == 2021, "fiscal 2021 ended January 2, 2022"
    late = identity_from_text(TEN_K_COVER.replace("January 30 , 2021", "January 28, 2023"))
    assert late["fiscal_year"] == 2023, "a year that ends in late January is named by its end"


def test_a_release_keeps_the_fiscal_year_it_names_and_the_date_its_period_ends() -> None:
    release = identity_from_text(
        "March 9, 2023 Lumen Beauty Announces Fourth Quarter Fiscal 2022 Results Net Sales of "
        "$3.2 Billion BOLINGBROOK, Ill.--(BUSINESS WIRE)-- Lumen Beauty, Inc. (NASDAQ: LUMN) "
        "today announced financial results for the thirteen-week period (“fourth quarter”) and "
        "fifty-two-week period (“fiscal year”) ended January 28, 2023"
    )  # Ulta-style (wide)
    assert (release["fiscal_year"], release["fiscal_quarter"]) == (2022, 4)
    assert release["period_end"] == "2023-01-28" and release["tickers"] == ["LUMN"]
    assert release["entity"] == "Lumen Beauty"
    typed = card_from_stored("r", merge_cards(release))
    assert typed.year_by_end == 2023, "FY2023 to whoever names years by their end"


def test_the_file_names_company_word_joins_the_names_when_it_fits_the_text() -> None:
    card = merge_cards(
        identity_from_text(cover("ACME SYSTEMS INCORPORATED")),
        identity_from_file_name("ACME_2015_10K.pdf"),
    )
    assert "ACME" in card_from_stored("a", card).names
    other = merge_cards(
        identity_from_text(cover("ZENITH PLC")), identity_from_file_name("REPORT_2015_10K.pdf")
    )
    assert "REPORT" not in card_from_stored("z", other).names


def test_filings_of_one_company_share_every_name_it_goes_by() -> None:
    old = card_from_stored(
        "old", {"kind": "10-K", "entity": "Acme Systems Incorporated", "filed_as": "ACME",
                "fiscal_year": 2015}
    )  # fmt: skip
    new = card_from_stored(
        "new", {"kind": "10-K", "entity": "Acme Inc.", "aliases": ["Acme"], "tickers": ["ACM"],
                "filed_as": "ACME", "fiscal_year": 2022}
    )  # fmt: skip
    release = card_from_stored("q", {"kind": "earnings release", "tickers": ["ACM"]})
    read = {c.doc_id: c for c in read_cards([old, new, release])}
    assert "Acme" in read["old"].names and "ACM" in read["old"].acronyms
    assert "Acme" in read["q"].names, "a release that gave only a ticker is found by name"


def test_an_accession_number_is_never_a_documents_title() -> None:
    assert is_identifier("0000764478-23-000006")
    assert not is_identifier("Best Buy Reports Fourth Quarter Results")
    card = card_from_stored(
        "d", merge_cards(identity_from_text(TEN_K_COVER)), title="0000764478-21-000024"
    )
    assert card.display_title == "Acme Widgets 10-K FY2021"
    assert DocumentCard("m", title="Galaxy S10", product_model="Galaxy S10").display_title == (
        "Galaxy S10"
    )


def test_a_filing_named_only_by_its_file_is_tied_to_its_company_by_that_word() -> None:
    release = card_from_stored("q4", {"kind": "earnings release", "filed_as": "ZNT"})
    annual = card_from_stored(
        "k", merge_cards(identity_from_text(cover("ZENITH PACKAGING PLC", TRADING_TABLE)))
    )
    assert release.names == (), "a file's word alone is no name (REPORT_2023_10K.pdf)"
    read = {c.doc_id: c for c in read_cards([release, annual])}
    assert "Zenith Packaging" in read["q4"].names


def test_a_registrant_name_split_by_text_extraction_is_still_read() -> None:
    split = "Commission File No. 1-10635 NIKO, Inc\n. (Exact name of Registran\nt as specified"
    assert registrant(split) == "Niko, Inc."  # wide-style (a Nike cover)
    assert label(merge_cards(identity_from_text(cover("NIKO, Inc")))) == "Niko 10-K FY2022"


# ------------------------------------------------------------------ names printed on the cover only

COVERS = {
    # no "(Exact name of registrant ...)" line: the name follows the commission file number
    "Microsoft Corporation": "FORM 10-K ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE "
    "SECURITIES EXCHANGE ACT OF 1934 For the Fiscal Year Ended June 30, 2016 OR TRANSITION "
    "REPORT For the Transition Period From to Commission File Number 001-37845 MICROSOFT "
    "CORPORATION WASHINGTON 91-1144442 (STATE OF INCORPORATION) (I.R.S. ID) ONE MICROSOFT WAY",
    # the label printed after the state and the tax number, on the line below
    "3M Company": "FORM 10-K For the fiscal year ended December 31, 2018 Commission file number "
    "1-3285 3M COMPANY Delaware 41-0417775 (Exact name of registrant as specified in its "
    "charter) (State or other jurisdiction of incorporation) (I.R.S. Employer Identification No.)",
    # no file number line either: the capitalised name ending in a legal suffix
    "Orbital Aerospace Holdings": "UNITED STATES SECURITIES AND EXCHANGE COMMISSION FORM 10-K "
    "For the fiscal year ended December 31, 2022 ORBITAL AEROSPACE HOLDINGS Nevada 88-1234567",
    "The Lantern Company": "FORM 10-K For the fiscal year ended December 31, 2022 Commission "
    "File No. 1-442 THE LANTERN COMPANY (Exact name of registrant as specified in its charter)",
}


@pytest.mark.parametrize(("entity", "cover"), COVERS.items(), ids=list(COVERS))
def test_a_company_named_only_on_its_cover_is_read(entity: str, cover: str) -> None:
    card = merge_cards(identity_from_text(cover))
    assert card["entity"] == entity
    assert short_name(entity) in card["aliases"]


def test_a_cover_name_is_not_the_commission_or_an_act() -> None:
    cover = "UNITED STATES SECURITIES AND EXCHANGE COMMISSION Washington, D.C. 20549 FORM 10-K"
    assert "entity" not in identity_from_text(cover)


def test_a_company_named_by_a_digit_led_file_word_is_tied_to_it() -> None:
    assert identity_from_file_name("3M_2018_10K.pdf")["filed_as"] == "3M"
