"""TODO 4, the logged numbers of one step (groups of 4, 2 micro-batches) on the tiny model, with a fixed rollout and
stand-ins for TODOs 1 to 3 (see _update.py).

The cell grades the logging, as the text says: reward_mean, loss and kl must be what the step's own values give (the
rewards of the rollout it drew, what the stand-in for grpo_sequence_loss received and returned), at float32
precision; whether those values are right is the update cell's (a wrong log-prob costs its points there, not these
again). Where the step's own values cannot be read, the reference's numbers decide."""
import math

import numpy as np
from _update import Recorder, chat_prompts, kept, settings, stand_in_reward, stand_ins, tiny_policy

from autograder.compare import difference
from autograder.grading.hidden_tests import decode
from helpers import grpo

TODO = "TODO 4 (grpo_update, logged numbers)"
POINTS = 2
QUESTIONS = ("What is 64 plus 3?", "Could you add 19 and 8?", "Sum 71 and 2.", "Compute 35 + 9.")
LOGGED = ("reward_mean", "loss", "kl")


def as_float32(value):
    """A logged number as float32 (its precision); anything else as it is, for the comparison to name it."""
    try:
        return np.float32(float(value))
    except (TypeError, ValueError):
        return value


def probe(nb, observe):
    model, tokenizer = tiny_policy(4321)
    prompts = chat_prompts(tokenizer, QUESTIONS)
    params = [p for p in model.parameters() if p.requires_grad]
    recorder, calls, returned = Recorder(tokenizer, grpo.eos_token_ids(model, tokenizer)), [], []
    with nb.replaced(**stand_ins(calls)), recorder.installed():
        observe("grpo_update", kept, returned, nb.grpo_update, model, tokenizer, recorder.optimizer(params),
                list(prompts), settings(nb, len(prompts), 4, 2, 0.9))
    if not returned:
        return
    for key in LOGGED:
        observe.value(key, as_float32(returned[0].get(key)) if isinstance(returned[0], dict) else None)
    if recorder.rollouts:
        observe.value("rewards of the rollout drawn", stand_in_reward(recorder.rollouts[-1].completions))
    observe.value("what grpo_sequence_loss received", calls)


def judge(check):
    if not check.same("grpo_update"):
        return
    own = own_numbers(check)
    for key in LOGGED:
        logged(check, key, own.get(key))


def own_numbers(check) -> dict:
    """What the step's own values give for each logged number (only for the message; {} when unreadable)."""
    try:
        rewards = decode(check.raw("rewards of the rollout drawn"))
        calls = decode(check.raw("what grpo_sequence_loss received"))
        return {"reward_mean": sum(rewards) / len(rewards),
                "loss": sum(float(loss) for _, _, loss in calls) / len(calls),
                "kl": sum(mean_k3(new, ref) for new, ref, _ in calls) / len(calls)}
    except (TypeError, ValueError, AttributeError, ZeroDivisionError):
        return {}


def logged(check, key: str, own: float | None) -> None:
    """The logged number must equal what the step's own values give (float32 precision)."""
    found = check.raw(key)
    if found is None:
        check.expect(False, f"{key}: not logged. What to check: {HINTS[key]}")
        return
    if own is None or not math.isfinite(own):
        differs = difference(found, check.expected[key])
    else:
        differs = difference(found, {"type": "array", "library": "numpy", "dtype": "float32", "shape": [],
                                     "values": [own]})
    check.expect(differs is None, f"{key}: {differs} (what your step's own values give). What to check: {HINTS[key]}")


def mean_k3(new, ref) -> float:
    new, ref = np.atleast_1d(np.asarray(new, dtype=np.float64)), np.atleast_1d(np.asarray(ref, dtype=np.float64))
    d = ref - new                                                                        # (n,)
    return float(np.mean(np.exp(d) - d - 1.0))


HINTS = {
    "reward_mean": "reward_mean is the mean of format_reward over the rollout: keep its scores in `rewards`",
    "loss": "log each micro-batch's loss itself (loss.item()), not divided by cfg.grad_accum",
    "kl": "kl is the batch mean of the k3 estimate exp(d) - d - 1, d = logp_ref - logp_new, of the log-probs passed to "
          "grpo_sequence_loss",
}
