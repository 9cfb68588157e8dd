"""Dictated transcripts made from punctuated text, for the spoken-command task (``command`` column).

A clinician or a writer dictating says some marks ("chest pain period he denies fever") and leaves the
others to the reader; a transcript of it holds the command words among the words meant as words,
and the same words used literally ("the sigmoid colon", "a period of two weeks"). :func:`dictate` turns
a punctuated document into such a transcript: each mark it has is spoken, at the document's rate, as
one of its commands (:data:`~hf_punctcase.labels.SPOKEN_COMMANDS`), and each paragraph break as "new
paragraph" (or "new line"); the words of a command are labelled with it, every other word WORD. The
word before a spoken mark is labelled O (the mark is the command's), and the word after a spoken
sentence end keeps its capital, so that the model learns both. Colons, semicolons and exclamation
marks, which the punctuation head has no class for, keep their own command; unspoken, they fall back to
the scheme's labels as in every other corpus. Sentences that use the command words literally
(:data:`LITERAL_USES`) are mixed in, so that context and not the word decides. Written text seldom has
the marks of some commands (an exclamation mark, a semicolon, a line break inside a paragraph): a
share of the spoken marks is said as such a command of the same place (:data:`RARER_COMMANDS`,
:data:`LINE_BREAK_SHARE`), so that every command is heard often enough to be learnt.
"""

from __future__ import annotations

import random
from ..labels import (
    DEFAULT_CASE_LABELS,
    FALLBACK_LABEL,
    MARK_OF_LABEL,
    SENTENCE_END_LABELS,
    SPOKEN_COMMANDS,
    LabeledWords,
    LabelScheme,
)

#: How much of a document is dictated: all of its marks, some, or none (dictation mixes spoken and
#: unspoken marks, and a transcript with no command must come out as it does without the task).
DICTATION_RATES: tuple[float, ...] = (1.0, 0.6, 0.3, 0.0)

#: Of the paragraph breaks a document speaks, the share said as "new line" rather than "new paragraph".
NEWLINE_SHARE = 0.3

#: Of the marks a document speaks, the share said as a command that written text seldom has at the same
#: place: a sentence end as an exclamation, a comma as a semicolon or a colon.
RARER_COMMANDS: dict[str, tuple[tuple[str, float], ...]] = {
    "PERIOD": (("EXCLAMATION", 0.08),),
    "COMMA": (("SEMICOLON", 0.06), ("COLON", 0.04)),
}

#: Of the sentence ends a document speaks, the share followed by a spoken line break ("new line").
LINE_BREAK_SHARE = 0.05

#: A literal use is mixed in about once per this many words of a document.
WORDS_PER_LITERAL_USE = 120

#: Sentences in which a command's words are meant as words: the medical and everyday senses of
#: "colon", "period", "stop", "mark", "line", and talk about punctuation itself.
LITERAL_USES: tuple[str, ...] = (
    "The biopsy of the sigmoid colon showed no malignancy.",
    "There is a small polyp in the transverse colon.",
    "Colon cancer screening is due next year.",
    "The ascending colon appears normal.",
    "He had part of his colon removed in 2015.",
    "Her last menstrual period was two weeks ago.",
    "She has had a period of dizziness every morning.",
    "He was observed for a period of two weeks.",
    "The waiting period is about three months.",
    "That period of my life was really hard.",
    "Over a period of several years, the symptoms got worse.",
    "Her periods have been irregular since March.",
    "The incubation period is usually five days.",
    "The car came to a full stop at the light.",
    "We need to stop the bleeding first.",
    "Please stop taking the ibuprofen.",
    "The bus stop is right outside the clinic.",
    "There is a question mark over the diagnosis.",
    "Whether it works is still a question.",
    "Mark the spot where it hurts.",
    "There is a red mark on his left arm.",
    "She got full marks on the exam.",
    "Put a comma before and in that sentence.",
    "I always forget where the semicolon goes.",
    "The comma in that sentence changes its meaning.",
    "Use an exclamation mark only when you mean it.",
    "The period at the end of the sentence is missing.",
    "A colon introduces the list that follows it.",
    "This is a new line of treatment for him.",
    "The company launched a new line of products.",
    "He signed on the dotted line.",
    "The next line of the poem is my favourite.",
    "The first line of therapy did not work.",
    "She wrote a new paragraph about her childhood.",
    "The next paragraph explains the method.",
    "We waited in line for an hour.",
    "The central line was placed without complications.",
    "Draw a line under the last entry.",
    "Keep it short, just a paragraph or two.",
    "The new period of growth began in the spring.",
    # The command's word at the end of a clause, where a dictated mark could follow it.
    "The scope reached the end of the colon.",
    "Diverticula were seen throughout the colon.",
    "The mass sits in the proximal colon.",
    "The surgeon removed a segment of the colon.",
    "She is due for her next period.",
    "He has been stable over that period.",
    "The symptoms settled within the trial period.",
    "Her pain gets worse around her period.",
    "The bleeding did not stop.",
    "She asked me when to stop.",
    "We missed our stop.",
    "Get off at the last stop.",
    "The injection left a mark.",
    "Write your name next to the mark.",
    "His guess was wide of the mark.",
    "There was a long line.",
    "They joined the end of the line.",
    "The arterial line was removed.",
    "Sign on the bottom line.",
    "Read me the next line.",
    "She started a new line of work.",
    "Read the whole paragraph.",
    "The last paragraph was too long.",
    "That is a fair question.",
    # Talk about punctuation, the mark's name at the end.
    "There should be a comma here, not a full stop.",
    "You left out the comma.",
    "He ends every list with a semicolon.",
    "Her email had no full stop.",
    "That sentence needs a question mark.",
    "The heading ends with a colon.",
    "Her message ended with three exclamation marks.",
    "Too many exclamation points look unprofessional.",
)


#: Every mark of the written text, before a scheme folds colons, semicolons and exclamations into its labels.
_WRITTEN_MARKS = LabelScheme(tuple(MARK_OF_LABEL), DEFAULT_CASE_LABELS)


def _folded(label: str, scheme: LabelScheme) -> str:
    """A written mark's label in ``scheme`` (``COLON`` → ``COMMA`` where the scheme has no COLON)."""
    return label if label in scheme.punct_labels else FALLBACK_LABEL.get(label, "O")


def dictate(
    text: str,
    scheme: LabelScheme,
    rng: random.Random,
    rate: float | None = None,
    literal_uses: bool = True,
    rarer_commands: bool = True,
) -> tuple[LabeledWords, list[str]]:
    """A punctuated document as a dictated transcript: its words with command words inserted, their
    labels in ``scheme`` (command words: punctuation O, casing unknown), and each word's command label.

    ``rate``: the share of marks and paragraph breaks spoken (default: one of :data:`DICTATION_RATES`,
    drawn by ``rng``). Paragraphs are the text's lines. ``literal_uses``: mix in :data:`LITERAL_USES`.
    ``rarer_commands``: say a share of the spoken marks as rarer commands (:data:`RARER_COMMANDS`) and
    follow a share of the spoken sentence ends with "new line" (:data:`LINE_BREAK_SHARE`)."""
    rate = rng.choice(DICTATION_RATES) if rate is None else rate
    paragraphs = [line for line in text.split("\n") if line.strip()]
    words: list[str] = []
    punct: list = []
    case: list = []
    command: list[str] = []

    def say(label: str) -> None:
        for piece in rng.choice(SPOKEN_COMMANDS[label]).split():
            words.append(piece)
            punct.append("O")
            case.append(None)
            command.append(label)

    for number, paragraph in enumerate(paragraphs):
        sentences = _with_literal_uses(paragraph, rng) if literal_uses else paragraph
        labeled = _WRITTEN_MARKS.parse(sentences)
        for word, mark, cased in zip(labeled.words, labeled.punct, labeled.case):
            words.append(word)
            case.append(cased)
            command.append("WORD")
            if mark != "O" and mark in SPOKEN_COMMANDS and rng.random() < rate:
                punct.append("O")
                spoken = _rarer(mark, rng) if rarer_commands else mark
                say(spoken)
                if rarer_commands and spoken in SENTENCE_END_LABELS and rng.random() < LINE_BREAK_SHARE:
                    say("NEWLINE")
            else:
                punct.append(_folded(mark, scheme))
        if number < len(paragraphs) - 1 and words and rng.random() < rate:
            say("NEWLINE" if rng.random() < NEWLINE_SHARE else "PARAGRAPH")
    return LabeledWords(words, punct, case), command


def _rarer(mark: str, rng: random.Random) -> str:
    """The command a spoken mark is said as: ``mark``, or at its share one of :data:`RARER_COMMANDS`."""
    draw = rng.random()
    for command, share in RARER_COMMANDS.get(mark, ()):
        if draw < share:
            return command
        draw -= share
    return mark


def _with_literal_uses(paragraph: str, rng: random.Random) -> str:
    """The paragraph with literal-use sentences put between its sentences, about one per
    :data:`WORDS_PER_LITERAL_USE` words."""
    tokens = paragraph.split()
    if not tokens:
        return paragraph
    out: list[str] = []
    for token in tokens:
        out.append(token)
        if token.endswith((".", "?", "!")) and rng.random() < 12 / WORDS_PER_LITERAL_USE:
            out.append(rng.choice(LITERAL_USES))
    return " ".join(out)


__all__ = [
    "DICTATION_RATES", "LINE_BREAK_SHARE", "LITERAL_USES", "NEWLINE_SHARE", "RARER_COMMANDS", "WORDS_PER_LITERAL_USE", "dictate",
]
