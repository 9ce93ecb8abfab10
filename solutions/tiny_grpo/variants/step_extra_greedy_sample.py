"""A second grpo.sample_completions call per step (a greedy sample to watch): the one-rollout rule, and only it, fails.
"""
KIND = "wrong"
EXPECTED = {"test_one_rollout": 0}
PATCHES = [
    ('grpo_step',
     '    rewards = torch.as_tensor(get_reward(',
     """    watched = grpo.sample_completions(model, tokenizer, prompts[:1], 1, cfg.max_new_tokens, do_sample=False)
    rewards = torch.as_tensor(get_reward("""),
]
