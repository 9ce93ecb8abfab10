"""Never computes the reference log-probs, so beta is ignored."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'ref = scored(part, reference=True) if beta > 0 else None  # [n, t]',
     'ref = None'),
]
