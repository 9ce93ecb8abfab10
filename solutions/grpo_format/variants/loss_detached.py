"""Logp_new is detached: the right value, no gradient (TODO 4's checks use a stand-in for grpo_sequence_loss, so only
the gradient points are lost).
"""
KIND = "wrong"
EXPECTED = {"test_grpo_loss_gradients": 0}
PATCHES = [
    ('grpo_loss',
     'raw = logp_new - logp_ref',
     'raw = logp_new.detach() - logp_ref'),
]
