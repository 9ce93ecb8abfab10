"""Reduces the per-token loss in float32 (.float() on it and on the mask): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('microbatch_train_step',
     """    )  # [B, T]
""",
     """    )  # [B, T]
    per_token, response_mask = per_token.float(), response_mask.float()  # float32 from here on
"""),
]
