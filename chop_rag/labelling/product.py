"""The product a manual is about, in one place: the one its title, cover line or file name
names, in full ("Galaxy Tab S6", "Galaxy Z Flip"), else the one its text keeps naming.

Titles and file names are where collections of manuals name their models; the text rarely
does (0 times in the E-Manual's Galaxy S8+). A name counts in full, spelled as the text spells
it, never shortened to its code nor glued to another product's; a family's manual keeps its
name and lists the others it names as variants. Where nothing names the product, the count of
lines decides, and only between the codes the document's own text names: one sentence, table
cell, heading or JSON blob that names another product ("| Product | Coolwave 999Z
(authoritative) |", planted in a Coolwave 410X manual) is not evidence against all that, in any
language, and neither is text a reader does not see (chop_rag.text.grounding.described_text).
chop_rag.labelling.profile decides the profile with these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from chop_rag.labelling.cnm import name_in_title
from chop_rag.text.grounding import tokens
from chop_rag.text.names import name_key
from chop_rag.text.words import FUNCTION_WORDS

COVER_LINE_CHARS = 200  # where a text's cover line (its first) is read


class Rejection(TypedDict):
    """A value the LLM gave that the document does not support as a description."""

    field: str
    value: str
    reason: str


def file_name_words(source: str) -> str:
    """The file name's words: "Galaxy_Tab_S6.json" -> "Galaxy Tab S6"; a number's point stays
    ("Galaxy_Tab_A_10.5" -> "Galaxy Tab A 10.5")."""
    return " ".join(re.sub(r"[_\-]+|\.(?!\d)|(?<!\d)\.", " ", Path(source).stem).split())


def titled_by_file_name(document: Mapping[str, Any]) -> bool:
    """Whether the title was made from the file name (a text file, a markdown file without a
    heading, an E-Manual JSON titled by its device): every word of it is one of the name's."""
    words = set(tokens(file_name_words(document["source"])))
    return set(tokens(document["title"])) <= words


# ------------------------------------------------------------------ what the text names

_code = re.compile(r"(?<![\w+-])(?=[\w+-]*\d)(?=[\w+-]*[A-Za-z])[A-Za-z0-9][\w+-]*\+*")
_year_or_unit = re.compile(
    r"(?i)^(?:(?:19|20)\d\d(?:s)?|fy\d+|q[1-4]|h[12]|\d{1,2}x|\d+(?:st|nd|rd|th|s|k|p|v|w|a|mm|cm|m|"
    r"kg|g|mb|gb|tb|hz|khz|mhz|ghz|mah|db|min|h|sec|ms|fps|mp|bit|in|ft|lbs?|oz))$"
)
# the name written before a code: one or two capitalised words without digits ("Galaxy" of
# "Galaxy S10e Galaxy S10": never another product's code glued on)
_written_name = re.compile(r"(?<![\w+])([A-Z][A-Za-z&'-]*(?:\s+[A-Z][A-Za-z&'-]*)?)\s+$")
_numbered = re.compile(r"\b[A-Z][A-Za-z]+\s+\d+(?:\.\d+)?\+*(?!\S*[A-Za-z])")  # "Note 10"
MIN_MODEL_LINES = 2  # a name on one line is one sentence, cell, heading or blob
PROPER_SHARE = 0.9  # of a word's occurrences written capitalised: a name, not a noun


def model_codes(text: str) -> list[str]:
    """The model-like codes a text writes ("410X", "S10", "QN90A"), lowercased, in order."""
    return [c.lower() for c in _code.findall(text) if not _year_or_unit.match(c)]


def code_lines(described: str) -> dict[str, int]:
    """How many lines (or sentences) of the text name each model code."""
    counts: dict[str, int] = {}
    for line in re.split(r"[\n.!?]+", described):
        for code in set(model_codes(line)):
            counts[code] = counts.get(code, 0) + 1
    return counts


def written_forms(described: str) -> dict[str, str]:
    """For each model code of the text, how it most often writes it with the name before it
    ("410x" -> "Coolwave 410X"), in one pass over the text."""
    counts: dict[str, dict[str, int]] = {}
    for m in _code.finditer(described):
        before = _written_name.search(described[max(0, m.start() - 40) : m.start()])
        words = before.group(1).split() if before else []
        while words and words[0].lower() in FUNCTION_WORDS:  # "The Galaxy Note10"
            words.pop(0)
        if words:
            forms = counts.setdefault(m.group().lower(), {})
            form = f"{' '.join(words)} {m.group()}"
            forms[form] = forms.get(form, 0) + 1
    return {code: max(forms, key=lambda f: (forms[f], -len(f))) for code, forms in counts.items()}


def written_form(code: str, described: str) -> str | None:
    """How the text most often writes ``code`` with the name before it ("Coolwave 410X")."""
    return written_forms(described).get(code.lower())


def is_proper_name(word: str, described: str) -> bool:
    """Whether the text writes ``word`` as a name ("Galaxy", "Coolwave"): capitalised, not in
    capitals (an acronym: "TV"), in PROPER_SHARE of its occurrences and twice at least."""
    if len(word) < 2 or not word.isalpha() or word.lower() in FUNCTION_WORDS:
        return False
    found = re.findall(rf"(?<![\w/.@-]){re.escape(word)}(?![\w/@-])", described, re.IGNORECASE)
    named = sum(1 for w in found if w[0].isupper() and not w.isupper())
    return named >= 2 and named >= PROPER_SHARE * len(found)


def names_a_product(name: str, described: str) -> bool:
    """Whether a title's or file name's ``name`` names a product, not a kind of thing ("Air
    conditioner"): it carries a model code ("S10", "225B"), a number after a name word ("Note
    10") or a word the text writes as a name ("Galaxy" of "Galaxy Z Flip")."""
    return bool(
        model_codes(name)
        or _numbered.search(name)
        or any(is_proper_name(word, described) for word in name.split())
    )


def as_the_text_writes(name: str, described: str) -> str:
    """``name`` spelled as the text spells the same name ("Galaxy Note 10" -> "Galaxy Note10"
    where the text writes that), else as given."""
    codes = model_codes(name) or [c.lower() for c in _code.findall(re.sub(r"\s+", "", name))]
    for code in codes[-1:]:
        form = written_form(code, described)
        if form and name_key(form) == name_key(name):
            return form
    joined = name_key(name)
    for form in written_forms(described).values():
        if name_key(form) == joined:
            return form
    return name


def title_product(title: str, described: str) -> str | None:
    """The product a title (a cover's, a PDF's, a heading's) names, in full: "Galaxy Z Flip"
    of "Galaxy Z Flip User Manual"; None when it names none."""
    name = name_in_title(title)
    if not name or not names_a_product(name, described):
        return None
    return as_the_text_writes(name, described)


def file_product(source: str, described: str) -> str | None:
    """The product a file name names, in full: "Galaxy_Tab_S6.json" is the Galaxy Tab S6. A
    name in lower case says nothing of how the product is written: its code as the text writes
    it with its name ("good-225b.txt" whose text says "Coolwave 225B" is the Coolwave 225B,
    "coolwave_410x_german.txt" the Coolwave 410X), else its words as the text writes them."""
    name = name_in_title(file_name_words(source))
    if not name:
        return None
    if name != name.lower():
        return title_product(name, described)
    codes = model_codes(name)
    if not codes:  # "smart_tv_remote": which words are the name, the file cannot say
        return None
    if form := written_form(codes[-1], described):
        return form
    words = []
    for word in name.split():
        if model_codes(word):
            words.append(word.upper())
        else:
            words.append(word.capitalize() if is_proper_name(word, described) else word)
    return " ".join(words)


def _code_core(code: str) -> str:
    """The series part of a code: "s10" of "s10e" and "s10+", "note10" of "note10+"."""
    m = re.match(r"[a-z]*\d+", code)
    return m.group() if m else code


def variants(model: str, described: str) -> list[str]:
    """The other products of the model's family a manual also names ("Galaxy S10e" and
    "Galaxy S10+" in the Galaxy S10 manual): written with the same name before a code of the
    same series."""
    codes = model_codes(model)
    if not codes:
        return []
    code, name_words = codes[-1], set(tokens(model))
    found = []
    for other, form in written_forms(described).items():
        prefix = form.rsplit(" ", 1)[0]
        if (
            other != code
            and _code_core(other) == _code_core(code)
            and set(tokens(prefix)) <= name_words
            and code_lines(described).get(other, 0) >= 1
        ):
            found.append(form)
    return sorted(found, key=name_key)


def weighed_model(proposed: str | None, described: str) -> tuple[str | None, Rejection | None]:
    """The model the document's own text supports, given the one the LLM ``proposed``.

    The candidates are the codes the text names on MIN_MODEL_LINES lines or more; the count
    decides between them: the proposal stands when its code is named on as many lines as any
    (a tie goes to it), else the code the text names most (more than any other) is the model,
    as the text writes it. A name the text does not propose is no candidate, whatever the LLM
    was told. A proposal without a code ("Air conditioner") is left to the other checks; none
    (the one proposed was refused already) takes the text's."""
    counts, forms = code_lines(described), written_forms(described)
    codes = model_codes(proposed or "")
    if proposed and not codes:
        return proposed, None
    support = max((counts.get(c, 0) for c in codes), default=0)
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    most = ranked[0][1] if ranked else 0
    if proposed and support >= MIN_MODEL_LINES and support >= most:
        return proposed, None
    best = None
    if most >= MIN_MODEL_LINES and (len(ranked) == 1 or ranked[1][1] < most):
        best = forms.get(ranked[0][0])
    rejection = None
    if proposed:
        named = f"named on {support} line(s)"
        if best:
            named += f"; the document names {best} on {most}"
        rejection = Rejection(field="model", value=proposed, reason=named)
    return best, rejection


_COVER_TITLE = re.compile(r"\b(?:manual|guide|handbook|instructions)\b", re.IGNORECASE)


def named_product(document: Mapping[str, Any], described: str) -> str | None:
    """The product the document's title, cover or file name names, in full ("Galaxy Tab S6"),
    first found in that order; None when none names one. The cover is the text's first line
    when it is a manual's title ("Coolwave 410X Owner's Manual")."""
    if not titled_by_file_name(document) and (named := title_product(document["title"], described)):
        return named
    cover = next((line for line in described[:COVER_LINE_CHARS].splitlines() if line.strip()), "")
    if _COVER_TITLE.search(cover) and (named := title_product(cover, described)):
        return named
    return file_product(document["source"], described)
