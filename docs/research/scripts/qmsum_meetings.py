#!/usr/bin/env python3
"""The AMI Meeting Corpus's scenario meetings as punctuated, cased text, one meeting a line
({"text": one speaker turn a line}), from QMSum's copy of their manual transcripts (Yale-LILY/QMSum,
data/Product/train/*.json; the repository is MIT, the AMI transcripts CC BY 4.0: cite Carletta et al.
2005 and Zhong et al. 2021). The meetings of AMI's ASR partition's dev and test sets are left out.
Read straight from a bare git copy of the repository (`fetch github:Yale-LILY/QMSum`):

    python docs/research/scripts/qmsum_meetings.py --git-dir /work/.mirror/Yale-LILY+QMSum/repo \
        --output runs/external/qmsum_ami/qmsum_ami_train.jsonl

Each turn: QMSum's tags ({disfmarker}, {vocalsound}, ...) dropped, its tokenisation undone (punctuation,
clitics, hyphens, quotes re-attached; T_V_ -> TV), a run of marks a dropped tag left collapsed to its
strongest, consecutive turns of one speaker joined; words, casing and the transcribers' marks as written.
"""
import argparse
import json
import re
import subprocess

from hf_punctcase.atomic_files import atomic_output

#: AMI's full-corpus ASR partition: its dev and test meetings are held out of any training here.
ASR_DEV_TEST_MEETINGS = ("ES2011", "IS1008", "TS3004", "ES2004", "IS1009", "TS3003", "EN2002")

TAG_RE = re.compile(r"\{[a-z]+\}")
AT_RE = re.compile(r"(?<!\S)@+(?!\S)")
CLITIC_RE = re.compile(r"(\w) '(s|re|m|ll|ve|d|S|RE|M|LL|VE|D)\b")
NT_RE = re.compile(r"(\w) (n't|N'T)\b")
HYPHEN_RE = re.compile(r"(\w) - (?=\w)")
LETTERS_RE = re.compile(r"\b((?:[A-Za-z]_)+)")
SPACE_PUNCT_RE = re.compile(r"\s+([.,?!;:])")
PUNCT_RUN_RE = re.compile(r"[.,?!;:](?:\s*[.,?!;:])+")
STRENGTH = {"?": 5, "!": 4, ".": 3, ";": 2, ":": 1, ",": 0}


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def fix_quotes(text):
    toks = text.split()
    nq = sum(1 for t in toks if t == '"')
    if nq == 0:
        return text
    if nq % 2:  # unpaired: drop them rather than guess
        return " ".join(t for t in toks if t != '"')
    out, opening = [], True
    attach_next = False
    for t in toks:
        if t == '"':
            if opening:
                attach_next = True
            elif out:
                out[-1] += '"'
            opening = not opening
            continue
        if attach_next:
            t = '"' + t
            attach_next = False
        out.append(t)
    return " ".join(out)


def strongest(m):
    marks = [c for c in m.group(0) if c in STRENGTH]
    return max(marks, key=lambda c: STRENGTH[c])


def clean(text):
    t = TAG_RE.sub(" ", text)
    t = AT_RE.sub(" ", t)
    t = " ".join(t.split())
    t = fix_quotes(t)
    t = LETTERS_RE.sub(lambda m: m.group(1).replace("_", ""), t)
    t = CLITIC_RE.sub(r"\1'\2", t)
    t = NT_RE.sub(r"\1\2", t)
    t = HYPHEN_RE.sub(r"\1-", t)  # the lookahead leaves the next word to match: "a - b - c" in one pass
    t = SPACE_PUNCT_RE.sub(r"\1", t)
    t = PUNCT_RUN_RE.sub(strongest, t)
    t = re.sub(r'^[\s.,?!;:]+', "", t)
    t = " ".join(t.split())
    if not re.search(r"\w", t):
        return ""
    return t


def build_dialog(meeting):
    turns = []  # [speaker, text]
    for u in meeting["meeting_transcripts"]:
        c = clean(u.get("content", ""))
        if not c:
            continue
        spk = u.get("speaker", "")
        if turns and turns[-1][0] == spk:
            turns[-1][1] += " " + c
        else:
            turns.append([spk, c])
    return [t for _, t in turns]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", required=True, help="a bare git copy of Yale-LILY/QMSum")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    paths = sorted(git(args.git_dir, "ls-tree", "--name-only", "HEAD", "data/Product/train/").split())
    meetings = words = 0
    with atomic_output(args.output) as out:  # the whole file or none
        for path in paths:
            if path.rsplit("/", 1)[-1].startswith(ASR_DEV_TEST_MEETINGS):
                continue
            turns = build_dialog(json.loads(git(args.git_dir, "show", f"HEAD:{path}")))
            if turns:
                text = "\n".join(turns)
                out.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
                meetings, words = meetings + 1, words + len(text.split())
    commit = git(args.git_dir, "rev-parse", "HEAD").strip()
    print(f"{args.output}: {meetings} meetings, {words} words, from Yale-LILY/QMSum at {commit}")


if __name__ == "__main__":
    main()
