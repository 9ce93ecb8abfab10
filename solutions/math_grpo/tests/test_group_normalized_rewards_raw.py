"""Problem 2, requirement 1: raw_rewards, and reward_fn called exactly once per response, in order."""

TODO = "Problem 2 (raw rewards)"
POINTS = 2
REWARDS = [0.0, 1.0, 1.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.25, 0.75, 1.0, 0.0]
CASES = {"groups of 4 with std normalization": (4, True), "groups of 3 without std normalization": (3, False)}


def raw_rewards_and_calls(nb, group_size: int, normalize_by_std: bool) -> dict:
    """raw_rewards, and the (response, ground truth) pairs reward_fn was called with, in order."""
    calls = []

    def spy(response, truth):
        calls.append((response, truth))
        return {"reward": float(response), "format_reward": 1.0, "answer_reward": float(response)}

    responses, truths = [str(r) for r in REWARDS], [f"t{i}" for i in range(len(REWARDS))]
    _, raw, _ = nb.compute_group_normalized_rewards(spy, responses, truths, group_size, 1e-6, normalize_by_std)
    return {"raw_rewards": raw, "reward_fn calls": calls}


def probe(nb, observe):
    for label, (size, normalize) in CASES.items():
        observe(label, raw_rewards_and_calls, nb, size, normalize)


_RAW = ("raw_rewards is reward_fn's 'reward' for each response, in order, a tensor of shape (rollout_batch_size,); "
        "call reward_fn(response, ground_truth) exactly once per response, in order")
HINTS = {label: _RAW for label in CASES}
