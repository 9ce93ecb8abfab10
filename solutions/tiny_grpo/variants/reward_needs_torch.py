"""Returns a float tensor instead of a list: get_reward needs torch, and the grader runs it apart from the model,
with the standard library only (Cell 3 says so), so its checks fail with that line."""
KIND = "wrong"
EXPECTED = {"test_reward": 0, "test_sanity_table": 0}
PATCHES = [
    ('reward',
     """return [1.0 if response.split() == expected_answer(prompt).split() else 0.0  # all or nothing (Cell 1)
            for prompt, response in zip(prompts, responses)]""",
     """return torch.tensor([float(response.split() == expected_answer(prompt).split())
                         for prompt, response in zip(prompts, responses)])"""),
]
