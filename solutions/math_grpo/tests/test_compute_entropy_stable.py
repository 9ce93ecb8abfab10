"""compute_entropy, requirement 2: float32 logits scaled by 100, where most probabilities underflow to 0; rows
with two or three tied top logits keep the entropies (ln 2, ln 3) far from 0, so float32 rounding of any
stable formula stays within the comparison's tolerance."""
import torch

TODO = "compute_entropy (large logits)"
POINTS = 1
LOGITS = [[-2.1864, 3.6984, -2.9894, 1.6385, -3.3185, -2.0205, 3.993],
          [-2.3248, 1.1349, -0.3269, -0.3749, -0.0401, -2.4622, 2.6442],
          [2.0, 2.0, -1.0, 0.5, 2.0, -3.0, 1.0],
          [1.5, -0.5, 1.5, -2.0, 0.0, 1.0, -1.0]]                                    # (4, 7)


def probe(nb, observe):
    observe("float32 logits x 100", nb.compute_entropy, torch.tensor(LOGITS) * 100.0)


HINTS = {"float32 logits x 100": "large logits must give a finite, correct entropy: compute it from logsumexp / "
                                 "log_softmax, not log(softmax(...)), where a probability that underflows to 0 gives "
                                 "0 * log 0 = NaN"}
