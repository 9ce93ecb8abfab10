"""Scores the sampled tokens at temperature 1 whatever the sampling temperature."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'args = (part.sequences, part.attention_mask, part.prompt_width, cfg.temperature)',
     'args = (part.sequences, part.attention_mask, part.prompt_width)'),
]
