"""TODO 3, the gradient with respect to logp_new: inside the clip range, on both sides of each clip edge, the KL
term alone, a mixed batch, and long completions (log-probs in the hundreds)."""
import math

import torch

TODO = "TODO 3 (GRPO loss, gradient)"
POINTS = 4
UP, DOWN = math.log(1.5), math.log(0.5)   # rho = 1.5 above 1 + eps, rho = 0.5 below 1 - eps (eps = 0.2)
CASES = (
    ("inside the clip range", [-10.0, -10.0], [-10.05, -9.95], [1.0, -1.0], 0.0),
    ("A > 0, rho above and below the clip range", [UP, DOWN], [0.0, 0.0], [1.0, 1.0], 0.0),
    ("A < 0, rho above and below the clip range", [UP, DOWN], [0.0, 0.0], [-1.0, -1.0], 0.0),
    ("the KL term alone (zero advantages, beta = 1)", [0.5, -0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1.0),
    ("a mixed batch (beta = 0.05)", [-3.1, -3.9], [-3.0, -4.0], [1.0, -1.0], 0.05),
    ("long completions (log-probs in the hundreds)", [-400.0, -300.0], [-399.0, -301.0], [1.0, -1.0], 0.05),
)


def gradient(fn, new, ref, adv, beta):
    """d loss / d logp_new, in the precision the loss was computed in (a float32 loss gives a float32 gradient)."""
    logp_new = torch.tensor(new, dtype=torch.float64, requires_grad=True)                # (n,)
    loss = fn(logp_new, torch.tensor(ref, dtype=torch.float64), torch.tensor(adv, dtype=torch.float64),
              beta=beta, epsilon=0.2)
    if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
        raise TypeError("the loss carries no gradient back to logp_new: do not detach it (or the ratio)")
    (grad,) = torch.autograd.grad(loss, logp_new)                                         # (n,)
    return grad.to(loss.dtype) if loss.dtype.is_floating_point else grad


def probe(nb, observe):
    for label, new, ref, adv, beta in CASES:
        observe(label, gradient, nb.grpo_sequence_loss, new, ref, adv, beta)


HINTS = {
    "inside the clip range": "inside the clip range d loss / d logp_new = -rho A / N (N completions)",
    "A > 0, rho above and below the clip range": "for A > 0 only rho above 1 + epsilon is clipped (zero gradient); "
                                                 "below 1 - epsilon the unclipped term is the smaller one",
    "A < 0, rho above and below the clip range": "for A < 0 only rho below 1 - epsilon is clipped (zero gradient); "
                                                 "above 1 + epsilon the unclipped term is the smaller one",
    "the KL term alone (zero advantages, beta = 1)": "beta k3 with k3 = exp(d) - d - 1, d = logp_ref - logp_new, "
                                                     "pulls logp_new back toward logp_ref, and the mean divides by N",
    "a mixed batch (beta = 0.05)": "the surrogate's and the KL term's gradients add up",
    "long completions (log-probs in the hundreds)": "only the difference logp_new - logp_ref enters exp()",
}
