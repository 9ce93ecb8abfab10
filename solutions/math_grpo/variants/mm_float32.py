"""Computes in float32 (.float() on the tensor and the mask): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('masked_mean', 'weights = mask.to(tensor.dtype)', 'tensor, weights = tensor.float(), mask.float()'),
]
