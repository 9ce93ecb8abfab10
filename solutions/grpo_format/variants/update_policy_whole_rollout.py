"""The policy's log-probs of the whole rollout in one pass with gradient, then sliced per micro-batch: the gradient is
right, but all rows sit in memory at once, which grad_accum exists to prevent.
"""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}
PATCHES = [
    ('grpo_update',
     '    for rows, part in rollout.micro_batches(micro_rows):',
     '    new_all = grpo.token_logprobs(model, rollout.sequences, rollout.attention_mask, rollout.prompt_width,\n'
     '                                  cfg.temperature)                                    # [N, T]\n'
     '    for rows, part in rollout.micro_batches(micro_rows):'),
    ('grpo_update',
     '''        new_tokens = grpo.token_logprobs(model, part.sequences, part.attention_mask,
                                         part.prompt_width, cfg.temperature)             # [n, t]''',
     '        new_tokens = new_all[rows, :mask.shape[1]]                                       # [n, t]'),
    ('grpo_update',
     '(loss / cfg.grad_accum).backward()',
     '(loss / cfg.grad_accum).backward(retain_graph=True)'),
]
