"""Export: the trust_remote_code bundle written next to saved checkpoints
(:mod:`~hf_punctcase.export.remote_code`), ONNX export (:func:`~hf_punctcase.export.onnx.export_onnx`),
per-token int8 quantisation (:mod:`~hf_punctcase.export.per_token`) and the cached int8 graph of the
default (:mod:`~hf_punctcase.export.cache`). Import what you need from its module: this package imports
none of them, so that loading the remote-code bundle's writer does not load the exporter."""
