"""Ignores kl_penalty = "reward": the KL stays in the loss and the rewards are not penalised."""
KIND = "wrong"
EXPECTED = {"test_grpo_step": 0}
PATCHES = [
    ('grpo_step',
     'if cfg.beta > 0 and cfg.kl_penalty == "reward":',
     'if False:'),
    ('grpo_step',
     'beta = cfg.beta if cfg.kl_penalty == "loss" else 0.0  # the KL term of the loss',
     'beta = cfg.beta'),
]
