"""Always puts the KL in the rewards (kl_penalty ignored): the tests' config asks for it in the loss, so
the advantages, the loss and the gradient all differ."""
KIND = "wrong"
EXPECTED = {"test_grpo_step": 0, "test_grpo_step_loss": 0}
PATCHES = [
    ('grpo_step',
     'if cfg.beta > 0 and cfg.kl_penalty == "reward":',
     'if cfg.beta > 0:'),
    ('grpo_step',
     'beta = cfg.beta if cfg.kl_penalty == "loss" else 0.0  # the KL term of the loss',
     'beta = 0.0'),
]
