"""The CNN-BiLSTM family's subword vocabulary: a Unigram (SentencePiece-style) model trained with the
``tokenizers`` library on the words the model will see, wrapped as a transformers fast tokenizer.

The words are the pipeline's and the training data's: punctuation stripped (the labels carry it) and
lowercased (:meth:`hf_punctcase.labels.LabelScheme.parse`, :func:`hf_punctcase.tokenization.model_words`).
The tokenizer normalises the same way (NFKC, lowercase), marks each word's start with "▁" as
SentencePiece does, and is given words already split (``is_split_into_words=True``), so that every
subword belongs to one word and ``word_ids()`` gives it. It adds no special tokens; ``<pad>`` (id 0)
pads on the right and ``<unk>`` (id 1) stands for characters the vocabulary lacks.

    tokenizer = train_tokenizer(["So, what are the risks?", ...], vocab_size=5000)
    tokenizer.save_pretrained("tokenizers/cnn_bilstm")     # AutoTokenizer.from_pretrained loads it
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from transformers import PreTrainedTokenizerFast

from ...labels import LabelScheme

PAD_TOKEN = "<pad>"
UNK_TOKEN = "<unk>"
#: The vocabulary size of the family's tokenizer.
DEFAULT_VOCAB_SIZE = 5000


def training_words(texts: Iterable[str | Sequence[str]], scheme: LabelScheme | None = None) -> Iterator[list[str]]:
    """The words of each text as the model sees them: a string of punctuated text is parsed as the
    training data is (marks and quotes stripped, lowercased); a sequence of words (a dataset's
    ``words`` column) is lowercased."""
    scheme = scheme or LabelScheme()
    for text in texts:
        if isinstance(text, str):
            yield scheme.parse(text).words
        else:
            yield [word.lower() for word in text]


def train_tokenizer(
    texts: Iterable[str | Sequence[str]],
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    *,
    model_max_length: int = 512,
    max_piece_length: int = 16,
    show_progress: bool = False,
    character_coverage: float = 1.0,
) -> PreTrainedTokenizerFast:
    """Train a Unigram subword vocabulary of at most ``vocab_size`` pieces (``<pad>`` and ``<unk>``
    included) on ``texts`` (strings of punctuated text, or word sequences; see :func:`training_words`)
    and wrap it as a fast tokenizer that ``save_pretrained`` / ``AutoTokenizer.from_pretrained``
    round-trip. A small corpus may give fewer pieces than asked for.

    ``character_coverage`` below 1 trains on the words whose characters are all among the commonest
    ones that make up that share of the text (SentencePiece's ``character_coverage``; 0.9995 is its
    default for large character sets). The trainer keeps every character it sees as a piece of its
    own, so text with thousands of rare characters (Wikipedia's scripts, symbols) would leave a
    5,000-piece vocabulary little room for anything else; the characters left out become ``<unk>``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    if vocab_size < 3:
        raise ValueError(f"vocab_size must be ≥ 3 (two special tokens and a piece), got {vocab_size}")
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    # "always": every word of a pre-split input starts with "▁", wherever it stands.
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD_TOKEN, UNK_TOKEN],
        unk_token=UNK_TOKEN,
        max_piece_length=max_piece_length,
        show_progress=show_progress,
    )
    if not 0 < character_coverage <= 1:
        raise ValueError(f"character_coverage must be in (0, 1], got {character_coverage}")
    if character_coverage < 1:
        lines = _covered_lines(texts, character_coverage)
    else:
        lines = (" ".join(words) for words in training_words(texts) if words)
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token=UNK_TOKEN,
        pad_token=PAD_TOKEN,
        model_max_length=model_max_length,
        padding_side="right",
        model_input_names=["input_ids", "attention_mask"],
    )


def _covered_lines(texts: Iterable[str | Sequence[str]], coverage: float, words_a_line: int = 1024) -> Iterator[str]:
    """The training words whose characters all cover ``coverage`` of the text's characters, as lines
    of repeated words: the trainer counts words, so it counts the same as over the text itself."""
    counts = Counter(word for words in training_words(texts) for word in words)
    characters: Counter[str] = Counter()
    for word, count in counts.items():
        for character in word:
            characters[character] += count
    kept, covered, total = set(), 0, sum(characters.values())
    for character, count in characters.most_common():
        if covered >= coverage * total:
            break
        kept.add(character)
        covered += count
    for word, count in counts.items():
        if kept.issuperset(word):
            for start in range(0, count, words_a_line):
                yield " ".join([word] * min(words_a_line, count - start))


def train_tokenizer_on_corpora(
    corpora: Sequence[str],
    data_dir: str | None = None,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    *,
    max_words: int | None = None,
    model_max_length: int = 512,
    character_coverage: float = 1.0,
) -> tuple[PreTrainedTokenizerFast, dict[str, int]]:
    """Train the family's tokenizer (:func:`train_tokenizer`) on the train split of corpus specs as the
    training recipes name them (``ted``, ``swda``, ``mts_dialog``, ``text:my.jsonl``; weights are
    ignored: each corpus counts once), read as the training data is, each capped at ``max_words``
    words (``character_coverage``: as :func:`train_tokenizer` takes it). Returns the tokenizer and the
    words read from each corpus, by its spec as given."""
    from ...data import CorpusSpec, cap_words, count_words

    parts, words_read = [], {}
    for corpus in corpora:
        spec = CorpusSpec.parse(corpus)
        train = spec.load(data_dir, 200, splits=["train"], windows=True).get("train")
        if train is None:
            raise ValueError(f"{spec.name} has no train split")
        if max_words:
            train = cap_words(train, max_words)
        words_read[corpus] = count_words(train)
        parts.append(train)
    tokenizer = train_tokenizer(
        (words for part in parts for words in part["words"]), vocab_size, model_max_length=model_max_length,
        character_coverage=character_coverage,
    )
    return tokenizer, words_read


__all__ = [
    "DEFAULT_VOCAB_SIZE",
    "PAD_TOKEN",
    "UNK_TOKEN",
    "train_tokenizer",
    "train_tokenizer_on_corpora",
    "training_words",
]
