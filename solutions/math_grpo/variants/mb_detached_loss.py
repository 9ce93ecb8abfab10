"""Computes the loss on detached log-probs (backward() then fails)."""
KIND = "wrong"
EXPECTED = {
    "test_microbatch_train_step": 0,
    "test_microbatch_train_step_grad": 0,
    "test_microbatch_train_step_normalize": 0,
}
PATCHES = [
    ('microbatch_train_step',
     """        policy_log_probs, loss_type, raw_rewards, advantages, old_log_probs, cliprange
""",
     """        policy_log_probs.detach(), loss_type, raw_rewards, advantages, old_log_probs, cliprange
"""),
]
