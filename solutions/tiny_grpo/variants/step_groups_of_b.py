"""Advantages over groups of len(prompts) instead of G."""
KIND = "wrong"
EXPECTED = {"test_grpo_step": 0, "test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'advantages = group_advantages(rewards - cfg.beta * kl, G)  # [N], over the whole rollout',
     'advantages = group_advantages(rewards - cfg.beta * kl, len(prompts))'),
]
