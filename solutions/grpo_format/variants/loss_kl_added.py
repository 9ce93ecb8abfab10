"""The KL penalty is added to the objective (sign flipped)."""
KIND = "wrong"
EXPECTED = {"test_grpo_loss_values": 0, "test_grpo_loss_gradients": 0}
PATCHES = [
    ('grpo_loss',
     'return -(surrogate - beta * kl).mean()',
     'return -(surrogate + beta * kl).mean()'),
]
