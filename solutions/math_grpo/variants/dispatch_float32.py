"""Casts every tensor input to float32 before dispatching: judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('policy_gradient_loss',
     """    if loss_type == "no_baseline":
""",
     """    policy_log_probs, raw_rewards, advantages, old_log_probs = (
        None if t is None else t.float() for t in (policy_log_probs, raw_rewards, advantages, old_log_probs))
    if loss_type == "no_baseline":
"""),
]
