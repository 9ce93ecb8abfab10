"""Problem 2, requirement 4: metadata holds the batch means reward_mean, format_reward and answer_reward."""

TODO = "Problem 2 (metadata)"
POINTS = 1
ROWS = [(1.0, 1.0, 1.0), (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), (0.5, 1.0, 0.5), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0)]
KEYS = ("reward_mean", "format_reward", "answer_reward")


def logged(nb, normalize_by_std: bool) -> dict:
    """The three keys the training loop reads (any other key the student logs is theirs)."""
    table = {f"r{i}": {"reward": r, "format_reward": f, "answer_reward": a} for i, (r, f, a) in enumerate(ROWS)}
    _, _, meta = nb.compute_group_normalized_rewards(lambda response, truth: dict(table[response]), list(table),
                                                     ["x"] * len(ROWS), 3, 1e-6, normalize_by_std)
    missing = [key for key in KEYS if key not in meta] if isinstance(meta, dict) else list(KEYS)
    if missing:
        raise LookupError(f"metadata has no {missing} (it is {type(meta).__name__}"
                       f"{' with keys ' + str(sorted(map(str, meta))) if isinstance(meta, dict) else ''})")
    return {key: meta[key] for key in KEYS}


def probe(nb, observe):
    observe("metadata, without std normalization", logged, nb, False)
    observe("metadata, with std normalization", logged, nb, True)


_MEANS = ("a dict with 'reward_mean', 'format_reward' and 'answer_reward': the batch means of reward_fn's "
          "'reward', 'format_reward' and 'answer_reward' (plain floats or 0-d tensors)")
HINTS = {"metadata, without std normalization": _MEANS, "metadata, with std normalization": _MEANS}
