"""What a model card states: the facts (:class:`PunctCaseCardFacts`, every figure from a measurement:
the training records a recipe leaves with a checkpoint, or what the caller passes in), the rows of its
training-data table and its dev-set scores, and each model family in words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..models.joint_transformer.family import ARCHITECTURE as JOINT_ARCHITECTURE


def architecture_of(config: dict) -> str:
    """A checkpoint's model in words, from its config.json: its family's description (a type of no
    family of this library: the joint transformer's)."""
    from ..models import FAMILIES, family_of

    family = family_of(config.get("model_type")) or FAMILIES["joint_transformer"]
    return family.describe(config)


@dataclass
class TrainingDataset:
    """A row of the card's training-data table."""

    name: str  # what the corpus is (hf_punctcase.data.LICENCES), e.g. "Switchboard Dialog Act corpus"
    words: int | None  # None: the record has only the total (an MLM corpus mix), or the card gave none
    licence: str
    description: str = ""  # how it was used: "stage 1, weight 0.285", "MLM adaptation", ...
    corpus: str = ""  # the corpus name in hf_punctcase.data ("swda"): the card's `datasets` metadata
    words_note: str = "see Training"  # what the table says where ``words`` is None


@dataclass
class DevSetEvaluation:
    """The scores of one dev set, keyed as hf_punctcase.evaluation gives them (fractions): ``punct_overall_f1``,
    ``punct_COMMA_precision``, ``case_overall_f1``, ``punct_slot_error_rate``, ``words``, ``words_per_second``.
    Per-class precision and recall are optional: without them the set has a row in the summary table only."""

    name: str
    scores: dict[str, float]


@dataclass
class PunctCaseCardFacts:
    """Facts a card states; every figure comes from a measurement, passed in by the caller."""

    model_name: str
    base_encoder: str
    num_parameters: int
    size_on_disk_mb: float
    datasets: list[TrainingDataset]
    recipe_command: str
    training_time: str
    hardware: str | None = None  # what it was trained on, e.g. "2 CPU cores (x86-64, bf16 autocast), no GPU"
    evaluations: list[DevSetEvaluation] = field(default_factory=list)
    evaluation_command: str = ""
    evaluation_notes: list[str] = field(default_factory=list)  # paragraphs above the evaluation tables
    notes: list[str] = field(default_factory=list)  # more limitations
    weights_dtype: str = "fp16"
    base_model_id: str | None = None  # the card's `base_model`: the Hub id of the encoder or checkpoint it started from
    encoder_id: str | None = None  # the encoder's Hub id (the base model too, unless it went on from a checkpoint)
    base_checkpoint: str | None = None  # the joint checkpoint it was trained further from, in words
    repo_id: str | None = None  # where the checkpoint is published, for the usage lines
    embedded_default: bool = False  # the package's default model: pipeline("punct-case") loads it
    embedded_name: str | None = None  # another embedded model's name (hf_punctcase.embedded), e.g. "on-device"
    onnx: bool = False  # the weights are an ONNX graph (run by ONNX Runtime; no trust_remote_code code)
    extra_sections: dict[str, str] = field(default_factory=dict)  # title → markdown (e.g. an ablation table)
    extra_datasets: list[str] = field(default_factory=list)  # `datasets` metadata a base checkpoint's card named
    punct_labels: Sequence[str] = ("COMMA", "PERIOD", "QUESTION")
    case_labels: Sequence[str] = ("UPPER_FIRST", "ALL_UPPER", "MIXED")
    #: The model's head tasks (disfluency, spoken command, paragraph) by title, with their labels.
    head_labels: dict[str, Sequence[str]] = field(default_factory=dict)
    architecture: str = JOINT_ARCHITECTURE  # the model in words (:func:`architecture_of`)
