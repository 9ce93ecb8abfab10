"""One backward over the whole rollout (ignores cfg.micro_batch: more memory, same gradient)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_step',
     'rollout.micro_batches(cfg.micro_batch)',
     'rollout.micro_batches(rollout.num_rows)'),
]
