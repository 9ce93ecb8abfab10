"""Summed over completions instead of averaged (TODO 4's checks use a stand-in for grpo_sequence_loss, so the update
keeps its points).
"""
KIND = "wrong"
EXPECTED = {"test_grpo_loss_values": 0, "test_grpo_loss_gradients": 0}
PATCHES = [
    ('grpo_loss',
     'return -(surrogate - beta * kl).mean()',
     'return -(surrogate - beta * kl).sum()'),
]
