"""Rewards for the probes of Problem 2: each response is its own reward written as a string."""

REWARDS = [0.0, 1.0, 1.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.25, 0.75, 1.0, 0.0]
TIES = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]               # groups of 4: two have equal rewards


def score(response: str, truth: str) -> dict:
    """The reward function the probes hand over: the reward is the response read as a number."""
    return {"reward": float(response), "format_reward": 1.0, "answer_reward": float(response)}


def advantages(nb, rewards: list, group_size: int, eps: float, normalize_by_std: bool):
    """The student's advantages for these rewards (one ground truth per response)."""
    responses = [str(r) for r in rewards]
    result = nb.compute_group_normalized_rewards(score, responses, ["x"] * len(rewards), group_size, eps,
                                                 normalize_by_std)
    return result[0]
