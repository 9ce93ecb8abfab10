"""helpers._logprobs (private: machinery the notebooks never show): the chunked chosen-token log-probs from the
last hidden states match the full log_softmax of the logits, values and gradients; and no such helper takes
logits (the TODOs' inputs)."""
from __future__ import annotations

import pytest
import torch

from helpers._logprobs import head_token_logprobs


def full_version(hidden, head, targets, temperature):
    log_probs = torch.log_softmax(head(hidden).float() / temperature, dim=-1)  # [N, T, V]
    return log_probs.gather(-1, targets[..., None]).squeeze(-1)  # [N, T]


def output_layer(h: int, v: int, dtype, bias: bool, gen) -> torch.nn.Linear:
    head = torch.nn.Linear(h, v, bias=bias).to(dtype)
    with torch.no_grad():
        head.weight.copy_(torch.randn(v, h, generator=gen))
        if bias:
            head.bias.copy_(torch.randn(v, generator=gen))
    return head.requires_grad_(False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("temperature,chunk,bias", [(1.0, 4, False), (0.7, 5, True), (1.3, 64, False)])
def test_values_and_gradients_match_the_full_log_softmax(dtype, temperature, chunk, bias):
    gen = torch.Generator().manual_seed(0)
    n, t, h, v = 3, 13, 16, 257  # T not a multiple of the chunk: the last chunk is short
    head = output_layer(h, v, dtype, bias, gen)
    base = torch.randn(n, t, h, generator=gen).to(dtype)
    targets = torch.randint(0, v, (n, t), generator=gen)
    weights = torch.randn(n, t, generator=gen)  # a loss that weighs positions differently
    grads = []
    for fn in (full_version, lambda x, w, y, temp: head_token_logprobs(x, w, y, temp, chunk=chunk)):
        hidden = base.clone().requires_grad_(True)
        out = fn(hidden, head, targets, temperature)
        assert out.shape == (n, t) and out.dtype == torch.float32
        (out * weights).sum().backward()
        grads.append((out.detach(), hidden.grad.float()))
        assert hidden.grad.dtype == dtype
    (ref, ref_grad), (got, got_grad) = grads
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2  # bf16 logits and gradients are rounded to 8 bits
    assert (got - ref).abs().max() <= tolerance * max(1.0, ref.abs().max().item())
    assert (got_grad - ref_grad).abs().max() <= tolerance * max(1.0, ref_grad.abs().max().item())


def test_mismatched_shapes_and_bad_arguments_say_what_is_wrong():
    hidden, head = torch.zeros(2, 5, 4), torch.nn.Linear(4, 11, bias=False)
    with pytest.raises(ValueError, match=r"targets must be \[N, T\] = \(2, 5\)"):
        head_token_logprobs(hidden, head, torch.zeros(2, 6, dtype=torch.long))
    with pytest.raises(ValueError, match=r"hidden states must be \[N, T, H\]"):
        head_token_logprobs(hidden[0], head, torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="output layer must map H = 4"):
        head_token_logprobs(hidden, torch.nn.Linear(3, 11), torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(TypeError, match="integer token ids"):
        head_token_logprobs(hidden, head, torch.zeros(2, 5))
    with pytest.raises(ValueError, match="temperature must be > 0"):
        head_token_logprobs(hidden, head, torch.zeros(2, 5, dtype=torch.long), temperature=0.0)


def test_non_finite_hidden_states_give_non_finite_scores():
    hidden = torch.zeros(1, 3, 4)
    hidden[0, 1, 2] = float("nan")
    out = head_token_logprobs(hidden, torch.nn.Linear(4, 7, bias=False), torch.zeros(1, 3, dtype=torch.long))
    assert torch.isfinite(out[0, 0]) and not torch.isfinite(out[0, 1])  # token_logprobs raises on it
