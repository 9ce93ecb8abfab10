"""Turns a negative dim into dim + 2, as if every tensor were 2-d."""
KIND = "wrong"
EXPECTED = {"test_masked_mean_dims": 0}
PATCHES = [
    ('masked_mean',
     """    weights = mask.to(tensor.dtype)
""",
     """    weights = mask.to(tensor.dtype)
    if dim is not None and dim < 0:
        dim = dim + 2
"""),
]
