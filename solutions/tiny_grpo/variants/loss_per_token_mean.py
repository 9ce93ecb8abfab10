"""Each completion's terms averaged over its tokens (the GRPO paper's 1/|y_i|), then over completions."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('loss',
     'return per_token.sum(dim=1).mean()',
     'return (per_token.sum(dim=1) / keep.sum(dim=1).clamp(min=1)).mean()'),
]
