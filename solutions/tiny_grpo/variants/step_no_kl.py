"""Never computes the reference log-probs, so beta is ignored."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'ref = grpo.reference_token_logprobs(model, *args) if cfg.beta > 0 else None  # [n, t]',
     'ref = None'),
]
