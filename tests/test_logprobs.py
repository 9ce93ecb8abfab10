"""helpers._logprobs (private: machinery the notebooks never show): the chunked chosen-token log-probs
match the full log_softmax, values and gradients."""
from __future__ import annotations

import pytest
import torch

from helpers._logprobs import chosen_token_logprobs


def full_version(logits, targets, temperature):
    log_probs = torch.log_softmax(logits.float() / temperature, dim=-1)  # [N, T, V]
    return log_probs.gather(-1, targets[..., None]).squeeze(-1)  # [N, T]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("temperature,chunk", [(1.0, 4), (0.7, 5), (1.3, 64)])
def test_values_and_gradients_match_the_full_log_softmax(dtype, temperature, chunk):
    gen = torch.Generator().manual_seed(0)
    n, t, v = 3, 13, 257  # T not a multiple of the chunk: the last chunk is short
    base = (4 * torch.randn(n, t, v, generator=gen)).to(dtype)
    targets = torch.randint(0, v, (n, t), generator=gen)
    weights = torch.randn(n, t, generator=gen)  # a loss that weighs positions differently
    grads = []
    for fn in (full_version, lambda x, y, temp: chosen_token_logprobs(x, y, temp, chunk=chunk)):
        logits = base.clone().requires_grad_(True)
        out = fn(logits, targets, temperature)
        assert out.shape == (n, t) and out.dtype == torch.float32
        (out * weights).sum().backward()
        grads.append((out.detach(), logits.grad.float()))
        assert logits.grad.dtype == dtype
    (ref, ref_grad), (got, got_grad) = grads
    assert (got - ref).abs().max() <= 1e-5
    tolerance = 1e-5 if dtype == torch.float32 else 1e-2  # bf16 gradients are rounded to 8 bits
    assert (got_grad - ref_grad).abs().max() <= tolerance * max(1.0, ref_grad.abs().max().item())


def test_mismatched_shapes_and_bad_arguments_say_what_is_wrong():
    logits = torch.zeros(2, 5, 11)
    with pytest.raises(ValueError, match=r"targets must be \[N, T\] = \(2, 5\)"):
        chosen_token_logprobs(logits, torch.zeros(2, 6, dtype=torch.long))
    with pytest.raises(ValueError, match=r"logits must be \[N, T, V\]"):
        chosen_token_logprobs(logits[0], torch.zeros(5, dtype=torch.long))
    with pytest.raises(TypeError, match="integer token ids"):
        chosen_token_logprobs(logits, torch.zeros(2, 5))
    with pytest.raises(ValueError, match="temperature must be > 0"):
        chosen_token_logprobs(logits, torch.zeros(2, 5, dtype=torch.long), temperature=0.0)


def test_non_finite_logits_give_non_finite_scores():
    logits = torch.zeros(1, 3, 7)
    logits[0, 1, 4] = float("nan")
    out = chosen_token_logprobs(logits, torch.zeros(1, 3, dtype=torch.long))
    assert torch.isfinite(out[0, 0]) and not torch.isfinite(out[0, 1])  # token_logprobs raises on it
