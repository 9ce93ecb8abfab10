"""Returns rewards as a list of floats and a tensor loss value."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_step',
     ('return {"loss": loss_sum, "rewards": rewards, "advantages": advantages, "kl": kl_sum, "rollout": roll'
      'out}'),
     ('return {"loss": float(loss_sum), "rewards": rewards.tolist(), "advantages": advantages, "kl": float(k'
      'l_sum), "rollout": rollout}')),
]
