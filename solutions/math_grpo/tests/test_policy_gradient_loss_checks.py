"""Problem 5, requirement 3: a missing required input or an unknown loss_type raises ValueError (or fails an assert),
while each loss_type given only the inputs it needs still computes its loss.

The errors are a rule, not equality: ValueError and AssertionError both pass; another error (a TypeError
from deep inside a loss) or no error fails. No stand-ins there: a dispatcher checks its arguments before it
calls a loss. A dispatcher that raises on every call fails the valid calls, which alone earn the points
(compared with the reference's, with the stand-ins or the student's own losses, as in requirement 1).
"""
from _batch import ADVANTAGES, RAW_REWARDS, column, log_probs
from _either import OWN
from _stand_ins import LOSSES

from autograder.compare import difference

TODO = "Problem 5 (dispatcher argument checks)"
POINTS = 2
ACCEPTED = ("ValueError", "AssertionError")


def failure(dispatch, **kwargs) -> str:
    """How the call failed: "ValueError", "AssertionError", another error's name, or "no error"."""
    try:
        dispatch(log_probs(64, rows=2, cols=3), **kwargs)
    except ValueError:
        return "ValueError"
    except AssertionError:
        return "AssertionError"
    except Exception as error:  # noqa: BLE001 - any other error is the answer reported
        return type(error).__name__
    return "no error"


def cases() -> dict:
    raw, adv, old = column(RAW_REWARDS[:2]), column(ADVANTAGES[:2]), log_probs(65, rows=2, cols=3)
    return {"no_baseline without raw_rewards": dict(loss_type="no_baseline", advantages=adv),
            "reinforce_with_baseline without advantages": dict(loss_type="reinforce_with_baseline", raw_rewards=raw),
            "grpo_clip without old_log_probs": dict(loss_type="grpo_clip", advantages=adv, cliprange=0.2),
            "grpo_clip without cliprange": dict(loss_type="grpo_clip", advantages=adv, old_log_probs=old),
            "grpo_clip without advantages": dict(loss_type="grpo_clip", old_log_probs=old, cliprange=0.2),
            "an unknown loss_type": dict(loss_type="ppo", raw_rewards=raw, advantages=adv)}


def valid() -> dict:
    raw, adv, old = column(RAW_REWARDS[:2]), column(ADVANTAGES[:2]), log_probs(65, rows=2, cols=3)
    return {"no_baseline given only raw_rewards": dict(loss_type="no_baseline", raw_rewards=raw),
            "reinforce_with_baseline given only advantages": dict(loss_type="reinforce_with_baseline", advantages=adv),
            "grpo_clip given only advantages, old_log_probs and cliprange":
                dict(loss_type="grpo_clip", advantages=adv, old_log_probs=old, cliprange=0.2)}


def loss_of(dispatch, **kwargs):
    return dispatch(log_probs(64, rows=2, cols=3), **kwargs)[0]


def probe(nb, observe):
    for label, kwargs in cases().items():
        observe(label, failure, nb.compute_policy_gradient_loss, **kwargs)
    with nb.replaced(**LOSSES):
        for label, kwargs in valid().items():
            observe(label, loss_of, nb.compute_policy_gradient_loss, **kwargs)
    for label, kwargs in valid().items():
        observe(label + OWN, loss_of, nb.compute_policy_gradient_loss, **kwargs)


def judge(check):
    for label in valid():
        own = label + OWN
        if difference(check.raw(own), check.expected[own]) is None:
            check.expect(True, label)
        else:
            check.same(label)
    for label in cases():
        got = check.got(label)
        if got == "NotImplementedError":
            check.expect(False, f"{label}: raised NotImplementedError (not written yet)")
            continue
        check.expect(got in ACCEPTED, f"{label}: {'no error' if got == 'no error' else 'raised ' + str(got)}; "
                                      "check the arguments first and raise ValueError (or fail an assert), not a "
                                      "TypeError deep inside a loss")


HINTS = dict.fromkeys(valid(), "a loss_type given exactly the inputs it needs must compute its loss: check only those "
                               "(raw_rewards for no_baseline, advantages for reinforce_with_baseline, advantages, "
                               "old_log_probs and cliprange for grpo_clip)")
