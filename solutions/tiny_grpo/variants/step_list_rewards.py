"""Returns rewards as a list of floats and a tensor loss value."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('grpo_step',
     ('return {"loss": loss_sum, "rewards": rewards, "advantages": advantages, "kl": kl.mean().item(), "rol'
      'lout": rollout}'),
     ('return {"loss": torch.tensor(loss_sum), "rewards": rewards.tolist(), "advantages": advantages, "kl": '
      'float(kl.mean()), "rollout": rollout}')),
]
