"""The chosen logit minus the row's logsumexp, in the logits' dtype: the same log-probs."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('logprobs',
     'return scores.log_softmax(-1).gather(-1, sequences[:, prompt_width:, None]).squeeze(-1)  # [N, T]',
     'return scores.gather(-1, sequences[:, prompt_width:, None]).squeeze(-1) - scores.logsumexp(-1)'),
]
