"""The issue's example: an all-ones mask and no KL term."""
KIND = "wrong"
EXPECTED = {"test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'ref = scored(part, reference=True) if beta > 0 else None  # [n, t]',
     'ref = None'),
    ('grpo_step',
     ('loss = grpo_loss(logprobs, advantages[rows].to(logprobs.device), part.completion_mask, ref, beta)'
      ' * share'),
     ('loss = grpo_loss(logprobs, advantages[rows].to(logprobs.device), torch.ones_like(part.completion_mask'
      '), ref, beta) * share')),
]
