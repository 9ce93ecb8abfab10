"""Names the batch mean reward 'mean_reward' instead of 'reward_mean' (loses only the metadata check)."""
KIND = "wrong"
EXPECTED = {"test_group_normalized_rewards_metadata": 0}
PATCHES = [
    ('group_normalized_rewards',
     '"reward_mean": raw_rewards.mean().item(),',
     '"mean_reward": raw_rewards.mean().item(),'),
]
