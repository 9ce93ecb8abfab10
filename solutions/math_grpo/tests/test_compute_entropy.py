"""compute_entropy, requirement 1: entropies in nats of 2-d float64 and 3-d float32 logits."""
import torch

TODO = "compute_entropy (values)"
POINTS = 1
LOGITS = [[-2.1864, 3.6984, -2.9894, 1.6385, -3.3185, -2.0205, 3.993],
          [-2.3248, 1.1349, -0.3269, -0.3749, -0.0401, -2.4622, 2.6442],
          [-3.2835, -2.1265, -3.8401, -1.8659, -0.7387, 3.2165, -0.9674]]            # (3, 7)


def probe(nb, observe):
    observe("3 distributions (float64)", nb.compute_entropy, torch.tensor(LOGITS, dtype=torch.float64))
    observe("a (2, 3, 7) batch (float32)", nb.compute_entropy, torch.tensor([LOGITS, LOGITS[::-1]]))
    observe("one distribution, a 1-d tensor", nb.compute_entropy, torch.tensor(LOGITS[1], dtype=torch.float64))


_NATS = "-sum p log p of softmax(logits) over the last dimension, in nats (natural log), shape logits.shape[:-1]"
HINTS = {"3 distributions (float64)": _NATS, "a (2, 3, 7) batch (float32)": _NATS + "; reduce only the last dimension",
         "one distribution, a 1-d tensor": _NATS}
