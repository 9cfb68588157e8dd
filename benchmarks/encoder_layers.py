#!/usr/bin/env python
"""What each layer of a pretrained encoder keeps of its tokens: over real TED speech (IWSLT dev2010
segments, lowercased and unpunctuated as ASR gives them), the mean cosine similarity between the hidden
states of one segment's tokens, and the share of their variance that is not common to the segment, at
the embeddings (layer 0) and after each layer. A sentence-embedding encoder trained for mean pooling
(all-mpnet-base-v2) makes its last layers' tokens alike, which a per-word tagger has to undo. The
encoder of a joint checkpoint is measured as trained.

    python benchmarks/encoder_layers.py --encoder mpnet --segments 200 [--markdown layers.md]
    python benchmarks/encoder_layers.py --encoder runs/accurate/mpnet12/checkpoint-300
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from hf_punctcase.atomic_files import atomic_output
from hf_punctcase.data import data_dir
from hf_punctcase.encoders import resolve_encoder
from hf_punctcase.labels import LabelScheme
from hf_punctcase.models.joint_transformer import JointTokenClassificationConfig, JointTokenClassificationModel


def load_encoder(name_or_path: str) -> tuple[PreTrainedTokenizerBase, PreTrainedModel]:
    """The tokenizer and encoder of a shipped encoder's name, an encoder folder, or a joint checkpoint."""
    if (Path(name_or_path) / "config.json").is_file() and isinstance(AutoConfig.from_pretrained(name_or_path), JointTokenClassificationConfig):
        encoder = JointTokenClassificationModel.from_pretrained(name_or_path, dtype=torch.float32).encoder
        return AutoTokenizer.from_pretrained(name_or_path), encoder.eval()
    folder = resolve_encoder(name_or_path)
    return AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()


def layer_statistics(encoder_name_or_path: str, segments: list[str], max_tokens: int = 256) -> tuple[list[float], list[float]]:
    """Per layer (embeddings first): the mean pairwise cosine between a segment's token states, and the
    share of their squared norm left after removing the segment's mean state; both averaged over segments."""
    tokenizer, encoder = load_encoder(encoder_name_or_path)
    cosines: list[list[float]] = []
    own_shares: list[list[float]] = []
    with torch.inference_mode():
        for text in segments:
            inputs = tokenizer(text, return_tensors="pt", truncation=True, max_length=max_tokens)
            states = encoder(**inputs, output_hidden_states=True).hidden_states
            segment_cosines, segment_shares = [], []
            for hidden in states:
                tokens = hidden[0, 1:-1].float()  # without the special tokens at either end
                unit = torch.nn.functional.normalize(tokens, dim=-1)
                n = len(tokens)
                segment_cosines.append((((unit @ unit.T).sum() - n) / (n * n - n)).item())
                segment_shares.append(((tokens - tokens.mean(0)).pow(2).sum() / tokens.pow(2).sum()).item())
            cosines.append(segment_cosines)
            own_shares.append(segment_shares)
    mean = lambda rows: [sum(column) / len(column) for column in zip(*rows)]  # noqa: E731
    return mean(cosines), mean(own_shares)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default="mpnet", help="minilm, mpnet, an encoder folder, or a joint checkpoint")
    parser.add_argument("--segments", type=int, default=200, help="IWSLT dev2010 segments to average over")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--markdown", default=None, help="also write the table to this file")
    args = parser.parse_args()
    scheme = LabelScheme()
    lines = (data_dir(args.data_dir) / "iwslt" / "dev2010_cased.txt").read_text(encoding="utf-8").splitlines()
    segments = [" ".join(scheme.parse(line).words) for line in lines]
    segments = [text for text in segments if len(text.split()) >= 2][: args.segments]
    cosines, shares = layer_statistics(args.encoder, segments)
    table = "\n".join([
        "| layer | " + " | ".join(map(str, range(len(cosines)))) + " |",
        "|---" * (len(cosines) + 1) + "|",
        "| mean cosine between a segment's tokens | " + " | ".join(f"{c:.2f}" for c in cosines) + " |",
        "| share of variance not common to the segment | " + " | ".join(f"{s:.2f}" for s in shares) + " |",
    ])
    print(f"{args.encoder}: {len(segments)} segments of IWSLT dev2010\n\n{table}")
    if args.markdown:
        with atomic_output(args.markdown) as handle:
            handle.write(table + "\n")


if __name__ == "__main__":
    main()
