"""Grpo_loss averages over every position, padding included."""
KIND = "wrong"
EXPECTED = {"test_loss": 0, "test_kl": 0}
PATCHES = [
    ('loss',
     'keep = mask.bool()  # [N, T]',
     'keep = torch.ones_like(mask).bool()'),
]
