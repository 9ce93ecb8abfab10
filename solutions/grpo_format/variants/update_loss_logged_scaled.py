"""Logs loss / grad_accum: a metadata mistake that loses only the logging points."""
KIND = "wrong"
EXPECTED = {"test_grpo_update_metrics": 0}
PATCHES = [
    ('grpo_update',
     'losses.append(loss.item())',
     'losses.append((loss / cfg.grad_accum).item())'),
]
