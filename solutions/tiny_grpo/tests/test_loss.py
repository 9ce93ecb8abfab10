"""Cell 5, grpo_loss's policy term (2 points): its value for each completion alone and for the batch,
other values at the padding, and its gradient (none into padding or advantages). Judge: the reference
sums each completion's terms; per-token means (each completion's sum over its length) are allowed."""
from _losses import ADVANTAGES, LENGTHS, MASK, backward, got_gradient, leaf, logprobs
from _rules import matches, replaced, rescaled, same_as

TODO = "Cell 5, grpo_loss (policy term)"
POINTS = 2
ROWS = [f"completion {i + 1} alone ({n} tokens)" for i, n in enumerate(LENGTHS)]
BATCH = ("four completions", "four completions, other values at the padding")
GRADIENT = "gradient to the log-probs"


def probe(nb, observe):
    loss, (policy, _) = nb.grpo_loss, logprobs(seed=1)
    for i, label in enumerate(ROWS):
        observe(label, loss, policy[i:i + 1].clone(), ADVANTAGES[i:i + 1].clone(), MASK[i:i + 1].clone())
    observe(BATCH[0], loss, policy.clone(), ADVANTAGES.clone(), MASK.clone())
    noisy = policy.clone()
    noisy[MASK == 0] = -1e4
    observe(BATCH[1], loss, noisy, ADVANTAGES.clone(), MASK.clone())
    lp, adv = leaf(policy), leaf(ADVANTAGES)
    observe("backward() of the loss", lambda: backward(loss(lp, adv, MASK.clone())))
    observe.value(GRADIENT, lp.grad)
    observe.value("the advantages get a gradient", got_gradient(adv))


def per_token_means(check) -> dict:
    """The expected observations if each completion's terms are averaged over its tokens."""
    rows = [check.want(label) for label in ROWS]
    batch = replaced(check.expected[BATCH[0]], sum(r / n for r, n in zip(rows, LENGTHS, strict=False)) / len(rows))
    return {**{label: rescaled(check.expected[label], [1 / n]) for label, n in zip(ROWS, LENGTHS, strict=True)},
            BATCH[0]: batch, BATCH[1]: batch,
            GRADIENT: rescaled(check.expected[GRADIENT], [1 / n for n in LENGTHS])}


def judge(check):
    means = per_token_means(check)
    expected = means if matches(check, BATCH[0], means[BATCH[0]]) else {}
    for label in (*ROWS, *BATCH, GRADIENT):
        same_as(check, label, expected.get(label, check.expected[label]))
    check.same("backward() of the loss")
    check.same("the advantages get a gradient")


_VALUE = ("the mean over completions of -A_i times the sum of the completion's masked token log-probs (or of "
          "their per-token mean, the same in every check)")
HINTS = {
    **dict.fromkeys(ROWS, _VALUE), BATCH[0]: _VALUE,
    BATCH[1]: "values at masked positions must change neither the value nor the gradient (mask before summing)",
    "backward() of the loss": "return a scalar tensor computed from logprobs (on the graph)",
    GRADIENT: "each unmasked token of completion i weighs -A_i / N (-A_i / |y_i| / N with "
                                 "per-token means); padding gets none",
    "the advantages get a gradient": "the advantages are constants: detach them",
}
