"""Configuration pieces every family shares: the label maps and the loss options, checked alike."""

from __future__ import annotations

from ...labels import LabelScheme
from ...tasks import TASKS, head_tasks


class JointLabelsMixin:
    """Label sets, standard label maps and loss options of a punct-case config; a family's config
    class lists it before ``PreTrainedConfig`` and calls :meth:`set_label_maps` and
    :meth:`validate_loss_options` in its ``__post_init__``."""

    def set_label_maps(self) -> None:
        """Check the label sets (of every task the config lists, :func:`hf_punctcase.tasks.tasks_of`), and name the punctuation classes (the output's `logits`) in the
        standard label maps, so that pipeline("token-classification") and the Hub widget show them."""
        self.punct_labels = list(self.punct_labels)
        self.case_labels = list(self.case_labels)
        LabelScheme(tuple(self.punct_labels), tuple(self.case_labels))  # validates the label sets
        for task in head_tasks(self):
            setattr(self, task.config_field, task.check_labels(getattr(self, task.config_field)))
            task.threshold_in(self)  # a decision threshold the config sets must be one
        self.id2label = dict(enumerate(self.punct_labels))
        self.label2id = {label: i for i, label in enumerate(self.punct_labels)}

    def validate_loss_options(self) -> None:
        """Raise on a bad α, label smoothing or class-weight list (also after they are changed for a run)."""
        for task in TASKS.values():
            name = task.loss_weight_field
            if name is not None and getattr(self, name, 0) < 0:  # a family without a weight's head lacks the field
                raise ValueError(f"{name} must be ≥ 0, got {getattr(self, name)}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if self.punct_class_weights is not None:
            self.punct_class_weights = [float(w) for w in self.punct_class_weights]
            if len(self.punct_class_weights) != len(self.punct_labels) or min(self.punct_class_weights) <= 0:
                raise ValueError(
                    f"punct_class_weights needs one positive weight per punctuation label {self.punct_labels}, "
                    f"got {self.punct_class_weights}"
                )

    @property
    def label_scheme(self) -> LabelScheme:
        return LabelScheme(tuple(self.punct_labels), tuple(self.case_labels))


__all__ = ["JointLabelsMixin"]
