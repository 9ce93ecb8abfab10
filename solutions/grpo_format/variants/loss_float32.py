"""The reference loss computed in float32 (inputs cast with .float()): a float32 result."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_loss',
     '    log_ratio = (logp_new - logp_ref)',
     '    logp_new, logp_ref, advantages = logp_new.float(), logp_ref.float(), advantages.float()\n'
     '    log_ratio = (logp_new - logp_ref)'),
]
