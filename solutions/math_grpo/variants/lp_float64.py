"""Log-softmax in float64 instead of float32 (more precise than asked): judged at float32 precision, full points."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('get_response_log_probs',
     'logits = model(input_ids=input_ids).logits.float()  # [B, T, V]',
     'logits = model(input_ids=input_ids).logits.double()  # [B, T, V]'),
]
