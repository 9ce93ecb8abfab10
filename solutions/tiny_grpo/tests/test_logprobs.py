"""Cell 5, completion_logprobs (1 point): the log-prob of each completion token from the whole
sequence's logits (column j predicts token j + 1), at the sampling temperature and at 1, for a batch
with a 3-token prompt, and the gradient to the logits; default comparison."""
import torch
from _losses import backward, leaf

TODO = "Cell 5, completion_logprobs"
POINTS = 1
PROMPT_WIDTH, VOCAB = 3, 11


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    """(logits [N=3, L=7, V=11], token ids [N, L]): a 3-token prompt and a 4-token completion per row."""
    draw = torch.Generator().manual_seed(7)
    return torch.randn(3, 7, VOCAB, generator=draw) * 2, torch.randint(VOCAB, (3, 7), generator=draw)


def probe(nb, observe):
    logits, sequences = inputs()
    for temperature in (0.7, 1):
        observe(f"log-probs at temperature {temperature}", nb.completion_logprobs, logits.clone(), sequences.clone(),
                PROMPT_WIDTH, float(temperature))
    weights = torch.linspace(-1.0, 1.0, 12).reshape(3, 4)                                    # [N, T]
    scores = leaf(logits)
    observe("backward() of a weighted sum at temperature 0.7",
            lambda: backward((nb.completion_logprobs(scores, sequences.clone(), PROMPT_WIDTH, 0.7) * weights).sum()))
    observe.value("gradient to the logits", scores.grad)


HINTS = {
    "log-probs at temperature 0.7": "log_softmax(logits / temperature) over the vocabulary; column j's logits predict "
                                    "token j + 1, so sequences[:, P:] are scored by logits[:, P-1:-1]; one value per "
                                    "completion token, [N, L - P]",
    "log-probs at temperature 1": "log_softmax over the vocabulary at each column, then gather the next token's entry",
    "backward() of a weighted sum at temperature 0.7": "return a tensor computed from logits (on the graph)",
    "gradient to the logits": "the gradient flows through log_softmax (no detach, no torch.no_grad); the prompt's "
                              "columns but the last get none",
}
