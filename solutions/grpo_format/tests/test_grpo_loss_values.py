"""TODO 3, the value: the visible check's example, the surrogate alone (beta = 0), the KL term alone (zero
advantages), identical policies, and twenty random batches."""
import math

import numpy as np
import torch

TODO = "TODO 3 (GRPO loss, value)"
POINTS = 4

EXAMPLE_NEW = [math.log(v) for v in (0.6, 0.4, 0.7, 0.3)]
EXAMPLE_REF = [math.log(v) for v in (0.5, 0.5, 0.6, 0.4)]
EXAMPLE_ADV = [1.2, -0.4, 0.5, -1.0]


def as_tensor(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)                                      # (n,)


def loss_of(fn, new, ref, adv, beta, epsilon):
    """fn on float64 tensors built from the lists (a student's loss may compute in float32: its result says so)."""
    return fn(as_tensor(new), as_tensor(ref), as_tensor(adv), beta=beta, epsilon=epsilon)


def all_of(fn, batches: list) -> list:
    return [loss_of(fn, *batch) for batch in batches]


def random_batches(seed: int, count: int) -> list:
    """(new, ref, adv, beta, epsilon) batches of 1 to 9 completions; |log rho| <= 0.6, inside any log-ratio guard."""
    gen = np.random.default_rng(seed)
    batches = []
    for _ in range(count):
        n = int(gen.integers(1, 10))
        ref = gen.uniform(-30.0, -2.0, size=n)                                            # (n,)
        new = ref + gen.uniform(-0.6, 0.6, size=n)                                        # (n,)
        adv = gen.uniform(-2.0, 2.0, size=n)                                              # (n,)
        batches.append((new.tolist(), ref.tolist(), adv.tolist(), float(gen.choice([0.0, 0.05, 0.3])),
                        float(gen.choice([0.1, 0.2, 0.3]))))
    return batches


def probe(nb, observe):
    loss = nb.grpo_sequence_loss
    observe("the visible check's example", loss_of, loss, EXAMPLE_NEW, EXAMPLE_REF, EXAMPLE_ADV, 0.1, 0.2)
    observe("the clipped surrogate alone (beta = 0)", loss_of, loss, EXAMPLE_NEW, EXAMPLE_REF, EXAMPLE_ADV, 0.0, 0.2)
    observe("the KL term alone (zero advantages, beta = 1)", loss_of, loss, EXAMPLE_NEW, EXAMPLE_REF, [0.0] * 4,
            1.0, 0.2)
    observe("identical policies, zero advantages", loss_of, loss, EXAMPLE_REF, EXAMPLE_REF, [0.0] * 4, 0.5, 0.2)
    batches = random_batches(3, 20)
    observe("twenty random batches", all_of, loss, batches)


HINTS = {
    "the visible check's example": "a 0-dimensional tensor: -mean(min(rho A, clip(rho, 1 - eps, 1 + eps) A) - beta k3)",
    "the clipped surrogate alone (beta = 0)": "rho = exp(logp_new - logp_ref); the surrogate is the smaller of rho A "
                                              "and clip(rho, 1 - epsilon, 1 + epsilon) A, averaged over the batch",
    "the KL term alone (zero advantages, beta = 1)": "k3 = exp(d) - d - 1 with d = logp_ref - logp_new, subtracted "
                                                     "from the surrogate (so it raises the loss)",
    "identical policies, zero advantages": "rho = 1 and k3 = 0 when the policies agree",
    "twenty random batches": "check the clip range, the sign of the KL term and the mean over the batch",
}
