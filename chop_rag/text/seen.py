"""Text as a reader sees it, and the places a reader does not look.

A document can disguise what it says to a machine reader: zero-width characters, soft
hyphens or bidi controls inside words ("I\u200bgnore"), letters of another script drawn like
Latin ones ("Ignоre", a Cyrillic o), fullwidth or mathematical letters. :func:`visible` reads
them as a person does. And it can hide it where nobody looks (:func:`hidden_places`): an HTML
comment, an image's alt text, a link's title, a block that opens with a chat role marker
("SYSTEM:", "### System", "[assistant]", "<|im_start|>system", in other languages too).
chop_rag.text.grounding decides what is an instruction with both.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache


@cache
def _format_characters() -> dict[int, None]:
    """Unicode's format characters (category Cf: zero-width space and joiners, soft hyphen,
    bidi controls, tags), from the runtime's Unicode tables, as a deletion table."""
    return {
        code: None
        for code in range(0x110000)
        if unicodedata.category(chr(code)) == "Cf"
    }  # fmt: skip


# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, letters only)
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝӽАВЕКМНОРСТХІЈЅҮԚԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινϲϳ",
    "aeopcyxijsdhlqwxABEKMHOPCTXIJSYQWABEZHIKMNOPTYXoivcj",
)
_LATIN = re.compile(r"[A-Za-z]")
_CYRILLIC_GREEK = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")


def visible(text: str) -> str:
    """``text`` as a reader sees it: compatibility forms folded (NFKC: fullwidth and
    mathematical letters), format characters removed (zero-width, soft hyphen, bidi), and
    Cyrillic or Greek lookalike letters read as Latin where Latin letters are the majority."""
    text = unicodedata.normalize("NFKC", text).translate(_format_characters())
    foreign = len(_CYRILLIC_GREEK.findall(text))
    if foreign and len(_LATIN.findall(text)) > foreign:
        text = text.translate(_LOOKALIKES)
    return text


# ------------------------------------------------------------------ where instructions hide

# A chat role's marker at the start of a line: "SYSTEM:", "### System", "[assistant]",
# "<|im_start|>system", "<<SYS>>", "[INST]", in capitals in other languages too. A role word in
# ordinary case counts only as a heading or in brackets ("System: Android 10" is a spec line).
_ROLE_WORD = (
    r"system|assistant|developer|syst[eè]me|sistema|systeem|assistent(?:e|in)?|asistente|"
    r"система|ассистент|系统|系統|システム|助手|시스템"
)
_ROLE_COMPOUND = (  # a role whatever its case: "System prompt", "Systemnachricht"
    r"system\s+(?:prompt|message|note|instructions?|override)|ai\s+assistant|"
    r"systemnachricht|systemanweisung|message\s+syst[eè]me|mensaje\s+del\s+sistema"
)
_ROLE_UPPER = (
    r"SYSTEM(?:\s+(?:PROMPT|MESSAGE|NOTE|INSTRUCTIONS?|OVERRIDE))?|ASSISTANT|DEVELOPER|"
    r"SYST[EÈ]ME|SISTEMA|SYSTEEM|ASSISTENT(?:E|IN)?|ASISTENTE|СИСТЕМА|АССИСТЕНТ|系统|系統|"
    r"システム|助手|시스템"
)
# A heading is a role's when it says so: in capitals, with a colon, or as a compound ("##
# System" alone is a manual's section on system settings).
_ROLE_MARKER = re.compile(
    r"^[ \t>]*(?:"
    r"#{1,6}[ \t]*(?:\*\*|__)?(?:(?:" + _ROLE_UPPER + r")|(?i:" + _ROLE_COMPOUND + r")"
    r"|(?i:" + _ROLE_WORD + r")(?=(?:\*\*|__)?[ \t]*[:：]))(?:\*\*|__)?[ \t]*(?:[:：].*)?$"
    r"|(?:\*\*|__)?(?:" + _ROLE_UPPER + r")(?:\*\*|__)?[ \t]*[:：]"
    r"|(?:system|assistant|developer)[ \t]*:"
    r"|[\[<{(]+[ \t]*\|?[ \t]*(?i:" + _ROLE_WORD + r"|im_start\|?[ \t]*\w+)"
    r"[ \t]*\|?[ \t]*[\]>})]+"
    r"|<\|im_start\|>|<<SYS>>|\[/?INST\]"
    r")",
    re.MULTILINE,
)
_LINE = re.compile(r"^.*$", re.MULTILINE)
_BLOCK_END = re.compile(r"\n[ \t]*\n|\n(?=#{1,6}[ \t])|\Z")
# Places of Markdown and HTML a reader does not see; group 1 is what hides there.
_HIDDEN_MARKUP = re.compile(
    r"(<!--[\s\S]*?(?:-->|\Z))"  # an HTML comment
    r"|!\[([^\]\n]*)\]"  # an image's alt text
    # a link's title, inline or in a reference definition
    r"|\]\(\s*<?[^\s)>]*>?\s+(?:\"([^\"\n]*)\"|'([^'\n]*)'|\(([^)\n]*)\))\s*\)"
    r"|^[ \t]*\[[^\]\n]+\]:[ \t]*\S+[ \t]+(?:\"([^\"\n]*)\"|'([^'\n]*)'|\(([^)\n]*)\))"
    r"|\b(?:alt|title|aria-label)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')",  # HTML attributes
    re.MULTILINE | re.IGNORECASE,
)


def hidden_places(text: str) -> list[tuple[int, int, bool]]:
    """Where ``text`` holds what a reader does not see, as (start, end, is a role block), in
    order: chat role blocks (the marker's line and the lines under it, to a blank line or a
    heading), HTML comments, alt texts, link titles and HTML alt/title attributes."""
    places: list[tuple[int, int, bool]] = []
    for line in _LINE.finditer(text):  # each line as seen: "SY\u200bSTEM:" is "SYSTEM:"
        if line.group().strip() and _ROLE_MARKER.match(visible(line.group())):
            block = _BLOCK_END.search(text, line.end())
            places.append((line.start(), block.start() if block else len(text), True))
    for m in _HIDDEN_MARKUP.finditer(text):
        group = next(g for g in range(1, (m.lastindex or 0) + 1) if m.group(g) is not None)
        places.append((m.start(group), m.end(group), False))
    places.sort()
    merged: list[tuple[int, int, bool]] = []
    for start, end, role in places:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2] or role)
        else:
            merged.append((start, end, role))
    return merged


def blanked(text: str, places: Sequence[tuple[int, int, bool]]) -> str:
    """``text`` with ``places`` replaced by spaces (offsets kept), line breaks left."""
    pieces, at = [], 0
    for start, end, _role in places:
        pieces.append(text[at:start])
        pieces.append(re.sub(r"[^\n]", " ", text[start:end]))
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
