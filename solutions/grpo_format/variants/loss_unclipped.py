"""No clipping: the surrogate is rho * A."""
KIND = "wrong"
EXPECTED = {"test_grpo_loss_values": 0, "test_grpo_loss_gradients": 0}
PATCHES = [
    ('grpo_loss',
     'surrogate = torch.minimum(ratio * advantages, clipped * advantages)',
     'surrogate = ratio * advantages'),
]
