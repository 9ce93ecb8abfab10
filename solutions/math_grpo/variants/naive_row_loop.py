"""One response at a time in a Python loop, rows stacked at the end (the loop form of the broadcast)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('naive_policy_gradient_loss',
     'return -raw_rewards_or_advantages * policy_log_probs  # [B, 1] * [B, T] -> [B, T]',
     'rows = [-weight[0] * row for weight, row in zip(raw_rewards_or_advantages, policy_log_probs)]  # B x [T]\n'
     '    return torch.stack(rows)  # [B, T]'),
]
