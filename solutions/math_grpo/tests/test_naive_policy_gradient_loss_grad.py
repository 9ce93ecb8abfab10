"""Problem 3, requirement 2: d loss / d log p = -A at every token (the log-probs are not detached)."""
import torch
from _batch import ADVANTAGES, column, gradient, log_probs

TODO = "Problem 3 (naive loss gradient)"
POINTS = 1


def summed_gradient(naive, weights, leaf):
    """Gradient of the summed loss with respect to ``leaf``, in the dtype of the loss."""
    loss = naive(weights, leaf)
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        loss.sum().backward()
    return gradient(leaf, loss)


def probe(nb, observe):
    naive = nb.compute_naive_policy_gradient_loss
    observe("gradient of the summed loss, 4 responses of 6 tokens", summed_gradient, naive, column(ADVANTAGES),
            log_probs(30, grad=True))
    observe("gradient of the summed loss, 3 responses of 3 tokens", summed_gradient, naive,
            column([[1.0], [-2.0], [0.5]]), log_probs(32, rows=3, cols=3, grad=True))


_GRAD = "the gradient flows into policy_log_probs (do not detach them, nor use .item()): d loss / d log p = -A"
HINTS = {"gradient of the summed loss, 4 responses of 6 tokens": _GRAD,
         "gradient of the summed loss, 3 responses of 3 tokens": _GRAD}
