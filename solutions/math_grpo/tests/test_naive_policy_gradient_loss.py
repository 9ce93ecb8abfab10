"""Problem 3, requirement 1: the per-token values -A * log p, also when batch_size == sequence_length."""
from _batch import ADVANTAGES, column, log_probs

TODO = "Problem 3 (naive policy-gradient loss)"
POINTS = 3


def probe(nb, observe):
    naive = nb.compute_naive_policy_gradient_loss
    observe("4 responses of 6 tokens", naive, column(ADVANTAGES), log_probs(30))
    observe("raw rewards as the weights", naive, column([[1.0], [0.0], [0.5], [1.0]]), log_probs(31))
    observe("3 responses of 3 tokens (batch size = sequence length)", naive, column([[1.0], [-2.0], [0.5]]),
            log_probs(32, rows=3, cols=3))


_VALUES = "the loss is -A * log p per token, each response's A (shape (batch, 1)) broadcast over its own row"
HINTS = {"4 responses of 6 tokens": _VALUES, "raw rewards as the weights": _VALUES,
         "3 responses of 3 tokens (batch size = sequence length)":
             "keep the (batch, 1) shape of the advantages so they broadcast along each row; squeezed to (batch,) "
             "they broadcast along the sequence instead, which only shows when batch size = sequence length"}
