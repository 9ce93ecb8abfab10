"""The kit's tiny model and its tokenizer, fresh for every call, on the CPU in float32 whatever the profile
(the expected values were recorded so), and the batches the log-prob probes score."""
import torch

from helpers import lm

PROMPTS = ["What is $3 + 4$? <think>", "Solve $x - 2 = 5$. <think>", "7 - 0 ="]
OUTPUTS = [" 3 + 4 = 7 </think> <answer> 7 </answer>", " x = 7", " 7"]


def tokenizer():
    return lm.load_tokenizer(lm.resolve_model("tiny", "unused"))


def fresh_model():
    """A copy of the tiny model no earlier call has held (a function that patches its model changes only that copy)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(lm.resolve_model("tiny", "unused"), dtype=torch.float32)
    return model.to("cpu").eval()


def batch() -> tuple:
    """(input_ids, labels, response positions) of PROMPTS + OUTPUTS, right-padded, built here from the tokenizer."""
    tok = tokenizer()
    prompts = [tok(p, add_special_tokens=False)["input_ids"] for p in PROMPTS]
    outputs = [tok(o, add_special_tokens=False)["input_ids"] for o in OUTPUTS]
    width = max(len(p) + len(o) for p, o in zip(prompts, outputs, strict=True))
    rows = [p + o + [tok.pad_token_id] * (width - len(p) - len(o)) for p, o in zip(prompts, outputs, strict=True)]
    response = [[0] * (len(p) - 1) + [1] * len(o) + [0] * (width - len(p) - len(o))
                for p, o in zip(prompts, outputs, strict=True)]
    ids = torch.tensor(rows)                                                         # (B, L)
    return ids[:, :-1], ids[:, 1:], torch.tensor(response, dtype=torch.bool)          # (B, L - 1) each


def at_response_positions(scores, key: str, labels: torch.Tensor, response: torch.Tensor) -> torch.Tensor:
    """``scores[key]`` at the response positions only, (n,): padded positions are never read (an attention mask
    may change them), prompt positions are not asked for."""
    if not isinstance(scores, dict) or key not in scores:
        keys = sorted(map(str, scores)) if isinstance(scores, dict) else type(scores).__name__
        raise LookupError(f"the result must be a dict with {key!r} (it has {keys})")
    value = scores[key]
    if tuple(value.shape) != tuple(labels.shape):
        raise ValueError(f"{key!r} has shape {tuple(value.shape)}, the labels {tuple(labels.shape)}")
    return value.detach().to("cpu")[response]                                        # (n,)


def scored(nb, key: str, **kwargs) -> torch.Tensor:
    """get_response_log_probs on a fresh model, ``scores[key]`` at the response positions."""
    input_ids, labels, response = batch()
    with torch.no_grad():
        scores = nb.get_response_log_probs(fresh_model(), input_ids, labels, **kwargs)
    return at_response_positions(scores, key, labels, response)
