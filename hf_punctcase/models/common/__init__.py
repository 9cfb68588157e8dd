"""What every model family shares: the label maps and loss options of its config
(:class:`~hf_punctcase.models.common.configuration.JointLabelsMixin`), its output
(:class:`~hf_punctcase.models.common.modeling.JointTokenClassifierOutput`), the joint loss and the
saving of remote code. No family imports from another family's folder."""
