"""Cell 5, k3_kl and grpo_loss's KL term (1 point): k3 per token and its gradient (through the policy's
log-probs only), the loss with beta = 0.5 for each completion alone and for the batch, and no KL term
for beta = 0, ref_logprobs = None or a reference equal to the policy. Judge: default comparison, the
per-token-mean convention allowed when both terms use it, and the no-KL cases equal to the student's
own loss without KL arguments."""
from _losses import ADVANTAGES, LENGTHS, MASK, backward, got_gradient, leaf, logprobs
from _rules import matches, replaced, rescaled, same_as

TODO = "Cell 5, k3_kl and the KL term of grpo_loss"
POINTS = 1
BETA = 0.5
ROWS = [f"completion {i + 1} alone ({n} tokens), beta 0.5" for i, n in enumerate(LENGTHS)]
BATCH = "four completions, beta 0.5"
NO_KL = ("four completions, beta 0", "four completions, ref_logprobs None", "four completions, reference = policy")
BASE = "four completions, no KL arguments"


def probe(nb, observe):
    k3, loss, (policy, ref) = nb.k3_kl, nb.grpo_loss, logprobs(seed=2)
    observe("k3 per token", k3, policy.clone(), ref.clone())
    observe("k3 of equal log-probs", k3, ref.clone(), ref.clone())
    lp, reference = leaf(policy), leaf(ref)
    observe("backward() of k3's sum", lambda: backward(k3(lp, reference).sum()))
    observe.value("k3's gradient to the policy log-probs", lp.grad)
    observe.value("k3 sends a gradient into the reference", got_gradient(reference))
    for i, label in enumerate(ROWS):
        observe(label, loss, policy[i:i + 1].clone(), ADVANTAGES[i:i + 1].clone(), MASK[i:i + 1].clone(),
                ref[i:i + 1].clone(), beta=BETA)
    observe(BATCH, loss, policy.clone(), ADVANTAGES.clone(), MASK.clone(), ref.clone(), beta=BETA)
    observe(BASE, loss, policy.clone(), ADVANTAGES.clone(), MASK.clone())
    observe(NO_KL[0], loss, policy.clone(), ADVANTAGES.clone(), MASK.clone(), ref.clone(), beta=0.0)
    observe(NO_KL[1], loss, policy.clone(), ADVANTAGES.clone(), MASK.clone(), None, beta=BETA)
    observe(NO_KL[2], loss, policy.clone(), ADVANTAGES.clone(), MASK.clone(), policy.clone(), beta=BETA)
    reference = leaf(ref)
    observe("backward() of the loss with beta 0.5",
            lambda: backward(loss(leaf(policy), ADVANTAGES.clone(), MASK.clone(), reference, beta=BETA)))
    observe.value("the loss sends a gradient into the reference", got_gradient(reference))


def judge(check):
    for label in ("k3 per token", "k3 of equal log-probs", "backward() of k3's sum",
                  "k3's gradient to the policy log-probs", "k3 sends a gradient into the reference",
                  "backward() of the loss with beta 0.5", "the loss sends a gradient into the reference"):
        check.same(label)
    rows = [check.want(label) for label in ROWS]
    means = {label: rescaled(check.expected[label], [1 / n]) for label, n in zip(ROWS, LENGTHS, strict=True)}
    means[BATCH] = replaced(check.expected[BATCH], sum(r / n for r, n in zip(rows, LENGTHS, strict=False)) / len(rows))
    expected = means if matches(check, BATCH, means[BATCH]) else check.expected
    for label in (*ROWS, BATCH):
        same_as(check, label, expected[label])
    for label in NO_KL:
        same_as(check, label, check.raw(BASE))


_TERM = ("+ beta times each completion's k3 summed over its masked tokens, averaged over the completions (per-token "
         "means if your policy term uses them, then both terms)")
HINTS = {
    "k3 per token": "exp(d) - d - 1 with d = ref_logprobs - logprobs, at every position",
    "k3 of equal log-probs": "k3 is 0 where the policy equals the reference",
    "k3's gradient to the policy log-probs": "the gradient flows through logprobs: 1 - exp(d) per token",
    "k3 sends a gradient into the reference": "the reference is frozen: detach ref_logprobs",
    **dict.fromkeys(ROWS, _TERM), BATCH: _TERM,
    **dict.fromkeys(NO_KL, "beta = 0, ref_logprobs=None, or a reference equal to the policy: the same value as "
                           "without the KL arguments"),
    "the loss sends a gradient into the reference": "the reference is frozen: no gradient into ref_logprobs",
}
