#!/usr/bin/env python3
"""The US presidents' news conferences of 1960–1980 as punctuated, cased text, one conference a line
({"text": one paragraph a line}), from the poldis R package's copy (henriquesposito/poldis,
data/US_News_Conferences_1960_1980.rda: 353 conferences, Eisenhower to Carter, gathered from The American
Presidency Project). The transcripts are the Public Papers of the Presidents, a work of the US government
(17 U.S.C. § 105: no copyright in the US); the package is MIT. Reporters' questions and the president's
answers, transcribed, punctuated and cased by the White House stenographers. Read straight from a bare git
copy of the repository (`fetch github:henriquesposito/poldis`); needs `pip install rdata`:

    python docs/research/scripts/presidential_news_conferences.py --git-dir /work/.mirror/henriquesposito+poldis/repo \
        --output runs/external/news_conferences/news_conferences_1960_1980.jsonl

Each conference: its paragraphs (joined by a bare comma in the package) split apart; the Public Papers'
own additions dropped (topic headings in capitals, bracketed item numbers and notes, footnotes and their
reference numbers, the closing NOTE); the speaker labels ("THE PRESIDENT.", "Q.", "Q. Name, Outlet:",
"SECRETARY MCNAMARA.") taken off, since a speaker's name is not something said; double hyphens and em dashes
spaced as a dash between words. Words, casing and the stenographers' marks otherwise as written.
"""
import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from hf_punctcase.atomic_files import atomic_output
from hf_punctcase.cards.facts import TrainingDataset
from hf_punctcase.cards.lineage import write_text_provenance

DATA_PATH = "data/US_News_Conferences_1960_1980.rda"

#: The package joins a conference's paragraphs with a bare comma: a comma with no space after it,
#: not inside a number ("1,000").
PARAGRAPH_BREAK_RE = re.compile(r"(?<!\d),(?=\S)|(?<=\d),(?=[^\d\s])")
#: A footnote's reference number, glued to a word or to the mark after it ("percent.2", "Scali.4",
#: "Johnson7a"), never to a number ("7.5 million").
FOOTNOTE_REF_RE = re.compile(r"(?:(?<=[a-z])|(?<=[a-z][.?!,;:\"”')]))\d{1,2}a?(?=[\s,.;:?!]|$)")
#: The footnotes themselves: a paragraph that starts with their number ("2 See Item 336.").
FOOTNOTE_RE = re.compile(r"^\d{1,2}a? ?[A-Z\"“]")
BRACKETED_RE = re.compile(r"\s*\[[^\]]*\]")
#: A speaker's label, after any topic heading the package ran into it ("BALANCE OF PAYMENTS Q."): "Q.",
#: "THE PRESIDENT." (and the scans' "THE, PRESIDENT.", "THE PRESIDENT,"), "SECRETARY MCNAMARA.", "MR. ZIEGLER.",
#: "EUGENE C. PATTERSON.", "FRANK CORMIER (Associated Press).".
CAPITALS_LABEL_RE = re.compile(
    r"^(?:(?:THE,? )?(?:VICE )?PRESIDENT(?:[.,:]+|(?= (?:[A-Z][a-z]|I |--|[a-z])))"
    r"|(?:[A-Z0-9][A-Z0-9'\-,.;]* )*?(?:Q\.|(?:THE,? )?PRESIDENT[.,:])"
    r"|(?:(?:MR|MRS|MS|DR|ADM|GEN)\. )?[A-Z][A-Z'\-]+(?: [A-Z]\.)?(?: (?:[A-Z][A-Z'\-]+|Mc[A-Z]+))*(?: \([^)]*\))?\.(?:\d{1,2}a?)?)(?:\s+|$)"
)
#: "Marvin L. Arrowsmith, Associated Press:", "Mr. Arrowsmith:", "Reporter:": a name (capitalised words,
#: initials, an outlet after a comma), then a colon.
NAME_LABEL_RE = re.compile(
    r"^(?:(?:Mr|Mrs|Ms|Miss|Dr)\. )?[A-Z][\w'\-]*\.?(?: (?:[A-Z][\w'\-&]*\.?|of|the|and|de|la))*"
    r"(?:, [A-Z][\w'\-&.]*(?: (?:[A-Z][\w'\-&.]*|of|the|and|&))*)?:\s+(?=\S)"
)
#: The Public Papers set a paragraph's first words in capitals ("NO, I don't believe so", "THANK YOU very
#: much"): those that are plain words go back to sentence case; acronyms ("SALT II", "ERDA") stay.
SMALL_CAPS_WORDS = {"NO", "YES", "WELL", "THANK", "YOU", "AT", "THE", "AS", "IS", "IN", "IT", "WE", "ON", "OF", "MR"}
#: The scans' "1" for "I" ("1 don't want to show"), before a verb.
OCR_I_RE = re.compile(
    r"(?<![\d$.,])\b1(?= (?:am|think|do|don't|did|was|have|had|would|will|can|believe|know|want|hope|could|feel|said"
    r"|say|guess|just|should|must|see|mean|wish|may|might|thought|suppose|understand|told|talked|assume|doubt|recall"
    r"|expect|agree|'m|'ve|'d|'ll)\b)"
)
DASH_RE = re.compile(r"\s*(?:--+|—)\s*")


def git(git_dir, *args, binary=False):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=not binary).stdout


def paragraph_text(paragraph: str) -> str:
    """One paragraph as said: labels, editorial additions and footnote numbers off; '' if nothing is left."""
    text = BRACKETED_RE.sub("", paragraph).strip()
    text = FOOTNOTE_REF_RE.sub("", text)
    # A question's label may carry the reporter's name after it ("Q. Merriman Smith, United Press
    # International: Mr. President, ..."); at most one of each kind, in that order.
    text = CAPITALS_LABEL_RE.sub("", text, count=1)
    text = NAME_LABEL_RE.sub("", text, count=1)
    text = re.sub(r"^\d{1,2}a? (?=[A-Z])", "", text)  # a footnote's number glued to a label ("ECHEVERRIA.1 Yes")
    words = text.split(" ")
    leading = 0
    while leading < min(len(words), 3) and words[leading].rstrip(",.") in SMALL_CAPS_WORDS:
        leading += 1
    if leading and (leading == len(words) or not (words[leading].isupper() and len(words[leading].strip(",.")) > 1)):
        words[:leading] = [w.lower() for w in words[:leading]]
        words[0] = words[0][:1].upper() + words[0][1:]
        text = " ".join(words)
    text = DASH_RE.sub(" -- ", text)
    text = re.sub(r"--(?: --)+", "--", text)
    text = re.sub(r"^-- ", "", " ".join(text.split()))
    if not re.search(r"[a-z]", text):  # a topic heading in capitals, or nothing
        return ""
    return text


def conference_paragraphs(text: str) -> list[str]:
    paragraphs = []
    # A footnote's number before the break that starts the footnote ("percent.2,2 See Item 336."), so
    # that the break is found.
    text = re.sub(r"(?<=[a-z.?!\"”')])\d{1,2}a?,(?=\d{1,2}a? ?[A-Z])", ",", text.replace("\n", ","))
    text = OCR_I_RE.sub("I", text)
    # A footnote's number glued to a comma inside a sentence ("Mr. Scali,4 who"), which would read as a break.
    text = re.sub(r"(?<=[A-Za-z.]),\d{1,2}a? (?=[a-z])", ", ", text)
    for paragraph in PARAGRAPH_BREAK_RE.split(text):
        paragraph = paragraph.strip()
        if paragraph.startswith("NOTE:"):  # the Public Papers' closing note on time and place
            break
        if FOOTNOTE_RE.match(paragraph):
            continue
        said = paragraph_text(paragraph)
        if said:
            paragraphs.append(said)
    return paragraphs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", required=True, help="a bare git copy of henriquesposito/poldis")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    import rdata  # only this script needs it

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "conferences.rda"
        path.write_bytes(git(args.git_dir, "show", f"HEAD:{DATA_PATH}", binary=True))
        table = next(iter(rdata.read_rda(path).values()))
    conferences = words = 0
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(args.output) as out:  # the whole file or none
        for number, (president, text) in enumerate(zip(table["president"], table["text"])):
            paragraphs = conference_paragraphs(str(text))
            if paragraphs:
                document = "\n".join(paragraphs)
                out.write(json.dumps({"id": f"{number:03d}", "president": president, "text": document}, ensure_ascii=False) + "\n")
                conferences, words = conferences + 1, words + len(document.split())
    commit = git(args.git_dir, "rev-parse", "HEAD").strip()
    # Beside the file, where its text came from and under what licence: a model trained on it carries
    # that licence in its card (hf_punctcase.cards), not "as the user's data".
    source = TrainingDataset(
        "US presidents' news conferences 1960–1980 (Public Papers of the Presidents, from henriquesposito/poldis, MIT)",
        words, "public domain (US government work)",
    )
    write_text_provenance(args.output, f"presidential_news_conferences.py from henriquesposito/poldis at {commit}", [source])
    print(f"{args.output}: {conferences} conferences, {words} words, from henriquesposito/poldis at {commit}")


if __name__ == "__main__":
    main()
