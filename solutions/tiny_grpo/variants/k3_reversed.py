"""K3 with d = policy - reference (the other KL direction)."""
KIND = "wrong"
EXPECTED = {"test_kl": 0}
PATCHES = [
    ('loss',
     'log_ratio = ref_logprobs.detach() - logprobs  # [N, T]; the reference is a constant',
     'log_ratio = logprobs - ref_logprobs.detach()'),
]
