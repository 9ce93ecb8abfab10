"""Logs the mean log-ratio instead of the k3 estimate: only the logging points are lost."""
KIND = "wrong"
EXPECTED = {"test_grpo_update_metrics": 0}
PATCHES = [
    ('grpo_update',
     'kls.append((torch.exp(delta) - delta - 1.0).mean().item())',
     'kls.append((-delta).mean().item())'),
]
