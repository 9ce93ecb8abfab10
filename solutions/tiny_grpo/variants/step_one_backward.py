"""One backward over the whole rollout (ignores cfg.micro_batch: more memory, same gradient)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_step',
     'for rows, part in rollout.micro_batches(cfg.micro_batch):\n        logprobs = scored(part)',
     'for rows, part in rollout.micro_batches(rollout.num_rows):\n        logprobs = scored(part)'),
]
