"""Lists of English words, written as prose (a list one word a line hides what it holds),
and the function words no name is made of alone, shared by ingest's company names
(chop.text.names) and the question side's topic words (chop.questions.matching)."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The words of ``text``, split on white space: a word list written as a few lines."""
    return frozenset(text.split())


# English function words: never a company's acronym or a name by themselves ("THE" of
# "THE COCA-COLA COMPANY" is an article, not an alias).
FUNCTION_WORDS = word_set(
    "a an the and or of for in on at to by with from as is are was were be it its this that "
    "what which who how when where why does did do has have had can could will would should "
    "my our your their any all"
)
