"""Records the mean reward under 'reward' instead of 'reward_mean'."""
KIND = "wrong"
EXPECTED = {"test_training_log": 0}
PATCHES = [
    ('train',
     '"reward_mean": torch.as_tensor',
     '"reward": torch.as_tensor'),
]
