"""No regular expression: each tag counted once, the ends and the middle of the stripped text compared as strings."""
KIND = "allowed"
EXPECTED = {}


# answer cell: format_reward
def format_reward(responses: list[str]) -> torch.Tensor:
    """1.0 where the stripped response is exactly the <think>/<answer> template, else 0.0.

    Returns a float32 tensor of shape [len(responses)] (rules 1 to 4 of TODO 1).
    """
    opening, middle, closing = "<think>\n", "\n</think>\n<answer>\n", "\n</answer>"

    def follows(text: str) -> bool:
        text = text.strip()
        if any(text.count(tag) != 1 for tag in ("<think>", "</think>", "<answer>", "</answer>")):
            return False
        if len(text) < len(opening) + len(middle) + len(closing):
            return False
        inner = text[len(opening):len(text) - len(closing)]
        return text.startswith(opening) and text.endswith(closing) and middle in inner

    return torch.tensor([1.0 if follows(text) else 0.0 for text in responses], dtype=torch.float32)
