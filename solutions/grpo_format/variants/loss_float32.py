"""The reference loss computed in float32 (inputs cast with .float()): a float32 result."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_loss',
     '    raw = logp_new - logp_ref',
     '    logp_new, logp_ref, advantages = logp_new.float(), logp_ref.float(), advantages.float()\n'
     '    raw = logp_new - logp_ref'),
]
