"""Training: the collator, trainers (distillation, masked-position MLM), LoRA and encoder shrinking."""
