"""Another regex (DOTALL, tags excluded one by one), default float32 tensor."""
KIND = "allowed"
EXPECTED = {}


# answer cell: format_reward
def format_reward(responses: list[str]) -> torch.Tensor:
    """1.0 where the stripped response is exactly the <think>/<answer> template, else 0.0.

    Returns a float32 tensor of shape [len(responses)] on the CPU.
    """
    no_tag = r"(?:(?!</?think>|</?answer>).)*"
    pattern = re.compile(r"<think>\n" + no_tag + r"\n</think>\n<answer>\n" + no_tag + r"\n</answer>", re.DOTALL)
    return torch.tensor([float(pattern.fullmatch(r.strip()) is not None) for r in responses])
