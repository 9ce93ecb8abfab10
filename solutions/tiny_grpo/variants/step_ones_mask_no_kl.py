"""The issue's example: an all-ones mask and no KL term."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'ref = grpo.reference_token_logprobs(model, *args) if cfg.beta > 0 else None  # [n, t]',
     'ref = None'),
    ('grpo_step',
     ('loss = grpo_loss(logprobs, advantages[rows].to(logprobs.device), part.completion_mask, ref, cfg.beta)'
      ' * share'),
     ('loss = grpo_loss(logprobs, advantages[rows].to(logprobs.device), torch.ones_like(part.completion_mask'
      '), ref, cfg.beta) * share')),
]
