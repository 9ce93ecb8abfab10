"""Cell 5, grpo_step's rollout (1 point): rewards of row i scored against prompt i // G, advantages over
the whole step (with cfg.kl_penalty = "reward": of the rewards minus beta times each completion's summed
k3), and ValueError for cfg.group_size < 2. On a fixed rollout of the tiny model, with the tests' stand-ins
for get_reward, group_advantages, grpo_loss, k3_kl and completion_logprobs; default comparison."""
import dataclasses

import torch
from _world import PROMPTS, STAND_INS, StepConfig, error_name, fixed_sampling, tiny_policy, tokenizer

TODO = "Cell 5, grpo_step (rewards and advantages)"
POINTS = 1
PENALISED = "advantages with cfg.kl_penalty = 'reward'"


def probe(nb, observe):
    tok, policy, cfg, done = tokenizer(), tiny_policy(nudge=True), StepConfig(), []
    with nb.replaced(**STAND_INS), fixed_sampling(tok, []):
        torch.manual_seed(11)
        observe("grpo_step on 3 prompts, G = 4", lambda: done.append(nb.grpo_step(policy, tok, list(PROMPTS), cfg)))
        if done:
            observe("rewards", lambda: done[0]["rewards"])
            observe("advantages", lambda: done[0]["advantages"])
        penalised = []
        observe("grpo_step with cfg.kl_penalty = 'reward'",
                lambda: penalised.append(nb.grpo_step(tiny_policy(nudge=True), tok, list(PROMPTS),
                                                      dataclasses.replace(cfg, kl_penalty="reward"))))
        if penalised:
            observe(PENALISED, lambda: penalised[0]["advantages"])
        single = dataclasses.replace(cfg, group_size=1)
        observe("cfg.group_size = 1", error_name, nb.grpo_step, policy, tok, list(PROMPTS[:2]), single)


HINTS = {
    "rewards": "score row i (completion i of the rollout) with get_reward against prompt i // G: repeat each "
               "prompt G times, in the rollout's order",
    "advantages": "call group_advantages once, on the rewards of the whole step, with group_size = cfg.group_size",
    PENALISED: "with kl_penalty = 'reward' (and beta > 0): group_advantages of rewards - beta * (each completion's "
               "k3 summed over its masked tokens, no gradient), and no KL term in the loss",
    "cfg.group_size = 1": "a group of one completion has no baseline: raise ValueError (group_advantages does, "
                          "if you call it before anything else fails)",
}
