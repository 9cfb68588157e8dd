"""The joint transformer's family entry (:class:`~hf_punctcase.models.common.family.ModelFamily`)."""

from __future__ import annotations

from ...labels import LabelScheme
from ...options.disfluency import DISFLUENCY
from ..common.family import ModelFamily
from .configuration import JointTokenClassificationConfig
from .modeling import JointTokenClassificationModel, reinitialize_top_layers

#: What a card says the family is.
ARCHITECTURE = (
    "a joint token classifier (Sunkara et al. 2020) with a punctuation head and a casing head that reads the "
    "punctuation softmax"
)


def describe(config: dict) -> str:
    """A checkpoint of the family in words, from its config.json."""
    if DISFLUENCY.labels_in(config):
        dependency = {
            "punct_to_disfl": ", reading the punctuation probabilities through attention between the heads",
            "disfl_to_punct": "; the punctuation head reads the disfluency probabilities through attention between the heads",
        }.get(config.get("head_dependency", "none"), "")
        return f"{ARCHITECTURE}, and a disfluency head that marks fillers, edit terms and reparanda{dependency}"
    return ARCHITECTURE


def new_model(model_args, scheme: LabelScheme, lexicon: dict[str, str], punct_loss_weight: float):
    """The joint model on a pretrained encoder (``--encoder``, its first ``--num_encoder_layers``
    layers, the last ``--reinitialize_top_layers`` of them given new weights), with new heads; its
    tokenizer is the encoder's."""
    from transformers import AutoTokenizer

    from ...encoders import resolve_encoder

    source = resolve_encoder(model_args.encoder)
    model = JointTokenClassificationModel.from_encoder(
        source,
        num_encoder_layers=model_args.num_encoder_layers,
        punct_labels=list(scheme.punct_labels),
        case_labels=list(scheme.case_labels),
        case_conditioning=model_args.case_conditioning,
        punct_loss_weight=punct_loss_weight,
        label_smoothing=model_args.label_smoothing,
        punct_class_weights=model_args.punct_class_weights,
        mixed_case_lexicon=lexicon,
        head_dependency=model_args.head_dependency,
        **model_args.head_config(),
        case_loss_weight=model_args.case_loss_weight,
    )
    if model_args.reinitialize_top_layers:
        reinitialize_top_layers(model.encoder, model_args.reinitialize_top_layers)
    return model, AutoTokenizer.from_pretrained(source), str(source)


FAMILY = ModelFamily(
    name="joint_transformer",
    config_class=JointTokenClassificationConfig,
    model_class=JointTokenClassificationModel,
    new_model=new_model,
    describe=describe,
)

__all__ = ["ARCHITECTURE", "FAMILY", "describe", "new_model"]
