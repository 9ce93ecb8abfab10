"""Negated cross-entropy per position."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('get_response_log_probs',
     'result = {"log_probs": log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)}  # [B, T]',
     ('result = {"log_probs": -torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="'
      'none")}')),
]
