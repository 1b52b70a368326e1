"""The financial statements a question names, and how a filing titles them.

"Based on the balance sheet, what were inventories ...", "using the statement of income and
the cash flow statement ...": a question that names a statement means the statement's page,
yet a small embedder ranks the page of figures below the notes and the MD&A text that discuss
the same line items (FinanceBench dev and wide: 1 of 22 such questions had it first).
chop_rag.retrieval.retrieve puts the named statements' best chunks first; this module says which
statements a question names and which chunks are those statements: a chunk under a heading
that is the statement's title ("Consolidated Balance Sheets", "MGM RESORTS INTERNATIONAL AND
SUBSIDIARIES CONSOLIDATED STATEMENTS OF CASH FLOWS") or one that opens with a line starting
with it. Titles are matched with "consolidated", as 10-Ks, 10-Qs and earnings releases write
them, so "Key Balance Sheet Data" in the MD&A and "the consolidated balance sheets" inside a
note's sentence are not taken for the statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

# What may follow a title printed alone: a qualifier in words ("(unaudited)", "(In millions)"),
# not a footnote mark ("Balance Sheet (e)" heads a column of a note's table)
QUALIFIER = r"(\([^)\n]{3,}\))"


@dataclass(frozen=True)
class Statement:
    name: str
    asked: re.Pattern[str]  # how a question names it
    title: str  # the statement's title after "consolidated", as a PostgreSQL regex (ARE)

    def heading_pattern(self, alone: bool = False) -> str:
        """A chunk's last heading that is this statement's title (not "... Data" of it): with
        "consolidated" anywhere in it, or (``alone``) the title by itself ("INCOME STATEMENTS",
        "Statements of Cash Flows (unaudited)")."""
        if alone:
            return rf"^\s*(condensed\s+)?({self.title})\s*{QUALIFIER}?\s*$"
        return rf"(^|\s)consolidated\s+({self.title})(?!\s+(data|information))"

    def opening_pattern(self, alone: bool = False) -> str:
        """A line of a chunk's opening that starts with the title, capitalised, and does not
        end in a page number or an amount (a year may end it): "Consolidated Balance Sheets 72"
        is a line of the index of statements, "Consolidated statements of income: cost of
        sales $ 25" a table's row, and "consolidated balance sheets. We maintain ..." a
        sentence the PDF wrapped (matched case-sensitively, ``(?c)``, whatever the operator).
        Printed without "consolidated" (``alone``), the title is a line of its own."""
        if alone:
            return rf"(^|\n)\s*(condensed\s+)?({self.title})\s*{QUALIFIER}?\s*(\n|$)"
        capitalised = "C" + _caseless(r"ondensed\s+consolidated") + "|C" + _caseless("onsolidated")
        return (
            rf"(?c)(^|\n)\s*({capitalised})" + _caseless(rf"\s+({self.title})")
            + r"(?![^\n]*\s[$(]?[0-9]{1,3}(,[0-9]{3})*(\.[0-9]+)?\)?\s*(\n|$))"
        )  # fmt: skip

    def titled(self, alone: bool = False) -> tuple[str, str]:
        """The statement's chunks, as a SearchFilter's ``titled``: titled as filings print the
        statement in their financial section ("Consolidated Balance Sheets"), or (``alone``)
        by the title printed by itself, to look for only where the first finds nothing: a
        filing that never writes "consolidated" ("INCOME STATEMENTS"), since "Income
        Statement (In thousand)" also heads a subsidiary's summary in the MD&A. PDF text often
        separates words with no-break spaces, which PostgreSQL's whitespace class does not
        match, so a gap in a title is either."""
        return _any_gap(self.heading_pattern(alone)), _any_gap(self.opening_pattern(alone))


def _caseless(pattern: str) -> str:
    """``pattern`` matching its letters in either case ("of" -> "[oO][fF]"); escapes stay."""
    return re.sub(
        r"\\.|[A-Za-z]",
        lambda m: m[0] if m[0].startswith("\\") else f"[{m[0].lower()}{m[0].upper()}]",
        pattern,
    )


def _any_gap(pattern: str) -> str:
    return pattern.replace(r"\s", r"[\s\u00a0]")


STATEMENTS = (
    Statement(
        "balance sheet",
        re.compile(
            r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+financial\s+(?:position|condition)\b", re.I
        ),
        r"balance\s+sheets?|statements?\s+of\s+financial\s+(position|condition)",
    ),
    Statement(
        "income statement",
        re.compile(
            r"\bincome\s+statements?\b|\bstatements?\s+of\s+(?:income|operations|earnings)\b"
            r"|\bp\s*&\s*l\b|\bprofit\s+and\s+loss\b",
            re.I,
        ),
        r"statements?\s+of\s+(income|operations|earnings)|income\s+statements?",
    ),
    Statement(
        "cash flow statement",
        re.compile(r"\bcash\s+flows?\s+statements?\b|\bstatements?\s+of\s+cash\s+flows?\b", re.I),
        r"statements?\s+of\s+cash\s+flows?|cash\s+flows?\s+statements?",
    ),
    Statement(
        "statement of equity",
        re.compile(
            r"\bstatements?\s+of\s+(?:changes\s+in\s+)?(?:(?:stock|share)holders['’]?\s+)?equity\b",
            re.I,
        ),
        r"statements?\s+of\s+(changes\s+in\s+)?((stock|share)holders['’]?\s+|total\s+)?equity",
    ),
)


# A non-GAAP measure as a reconciliation's title names it ("... to Adjusted EBITDAR")
NON_GAAP_MEASURE = (
    r"(adjusted|non[-\s]?gaap|ebitdar?|ebita?|free\s+cash\s+flow|organic|constant\s+currency"
    r"|comparable)"
)


@dataclass(frozen=True)
class Reconciliation:
    """The table that reconciles a non-GAAP measure to the GAAP figure it adjusts, which
    Regulation G requires wherever a company reports the measure: "Reconciliation of Net Income
    ... to Adjusted EBITDAR", "Recon of Non-GAAP Measures". A question about "Adjusted EBIT" or
    sales growth "excluding FX" is answered there, as one naming a statement is on its page; a
    reconciliation of the tax rate or of segments is not this table."""

    name: str = "non-GAAP reconciliation"

    def titled(self, alone: bool = False) -> tuple[str, str]:
        """Its chunks, as a SearchFilter's ``titled``: under a heading, or opening with a line,
        that says reconciliation and a non-GAAP measure (however printed: ``alone`` is alike)."""
        recon, measure = r"\mrecon\w*\M", NON_GAAP_MEASURE
        heading = rf"{recon}.*\m{measure}|\m{measure}.*{recon}"
        opening = rf"(^|\n)[^\n]*{recon}[^\n]*\m{measure}"
        return _any_gap(heading), _any_gap(opening)


RECONCILIATION = Reconciliation()


@dataclass(frozen=True)
class BusinessDescription:
    """Item 1 of a 10-K, "Business", where Regulation S-K (Item 101) has the company describe
    what it does: its industry, products, segments and markets. A question about what the
    company is ("What industry does X primarily operate in?") is answered there, not in the
    risk factors that also say "industry" (Item 1A) or the MD&A."""

    name: str = "business description"

    def titled(self, alone: bool = False) -> tuple[str, str]:
        """Its opening, as a SearchFilter's ``titled``: the chunk whose heading or opening
        lines hold "Item 1. Business" as a line of its own (not "Item 1A.", not the table of
        contents' "Item 1. Business 4"), where the company says what it is before its
        sections on competition, customers and employees."""
        line = r"(^|\n)\s*item\s*1\M[^a-z0-9\n]*business[.:]?\s*(\n|$)"
        return _any_gap(line), _any_gap(line)


BUSINESS_DESCRIPTION = BusinessDescription()
# A question about what a company is or does, rather than a figure or an event; where it
# operates ("the geographies it primarily operates in") is a segment table's, not this
ABOUT_THE_BUSINESS = re.compile(
    r"\bwhat\s+(?:industr(?:y|ies)|sectors?|lines?\s+of\s+business|kinds?\s+of\s+business)"
    r"\s+(?:does|do|is|are)\b"
    r"|\bwhat\s+(?:does|do)\s+[^?]{1,60}?\s+(?:do|sell|make|produce|manufacture|offer)\b"
    r"|\b(?:nature|description)\s+of\s+(?:[^?.]{0,40}?\s)?business\b"
    r"|\bbusiness\s+model\b",
    re.I,
)


class TitledPart(Protocol):
    """A part of a filing found by its printed title: a statement, a reconciliation, Item 1."""

    @property
    def name(self) -> str: ...

    def titled(self, alone: bool = False) -> tuple[str, str]: ...


def named_statements(question: str) -> list[Statement]:
    """The statements ``question`` names, in the order it names them."""
    found = [(match.start(), s) for s in STATEMENTS if (match := s.asked.search(question))]
    return [statement for _, statement in sorted(found, key=lambda pair: pair[0])]


def statement_named(title: str) -> str:
    """The name of the statement a printed title is ("Consolidated Statements of Operations"
    → "income statement"), "" when it names none."""
    for statement in STATEMENTS:
        if re.search(statement.title, title, re.IGNORECASE):
            return statement.name
    return ""
