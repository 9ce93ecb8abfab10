"""Computes in float32 (.float() on the logits): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('compute_entropy',
     """    log_norm = torch.logsumexp(logits, dim=-1)  # [...]
""",
     """    logits = logits.float()  # [..., V]
    log_norm = torch.logsumexp(logits, dim=-1)  # [...]
"""),
]
