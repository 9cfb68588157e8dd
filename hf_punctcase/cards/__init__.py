"""Model cards (the README.md of a checkpoint), built on ``huggingface_hub.ModelCard``.

- :mod:`~hf_punctcase.cards.facts`: what a card states (:class:`~hf_punctcase.cards.facts.PunctCaseCardFacts`,
  its training-data rows and dev-set scores) and each model family in words.
- :mod:`~hf_punctcase.cards.card`: the card's metadata and text, rendered from the package's template, and its
  training-data table read back.
- :mod:`~hf_punctcase.cards.licences`: the licence of a checkpoint from the licences of its training data.
- :mod:`~hf_punctcase.cards.training_records`: the records training leaves with a checkpoint, in words.
- :mod:`~hf_punctcase.cards.lineage`: the training data a checkpoint carries through everything its weights
  come from (its stages, MLM adaptation, teacher, base checkpoint).
- :mod:`~hf_punctcase.cards.weights`: the dtype a checkpoint's weights are stored in, and their parameter count.
- :mod:`~hf_punctcase.cards.checkpoint`: the card of a checkpoint folder (:func:`~hf_punctcase.cards.checkpoint.card_for_checkpoint`).
"""
