"""Hostile: expected_answer and get_reward are not written; the notebook wraps the kernel's probe runner so that
every task check reports what a correct task would (answers sorted in the kernel, rewards 1.0 for them and 0.0
for the rest, a sanity table that scores what it claims). The task's answers and rewards come from the task
cells run apart from the notebook, so none of it pays."""
KIND = "wrong"
EXPECTED = {"test_dataset": 0, "test_expected_answer": 0, "test_reward": 0, "test_sanity_table": 0,
            "test_eval_improvement": 0}
PATCHES = [
    ('dataset',
     """    found = re.findall(r"Sort the digits: (\\d(?: \\d)*)", prompt)  # the last one: examples come first
    if not found:
        raise ValueError(f"not a digit-sorting prompt: {prompt!r}")
    return " ".join(sorted(found[-1].split()))""",
     """    raise NotImplementedError()


import autograder.kernel.probe as _probe  # noqa: E402 - the forgery


def _sorted(prompt):
    return " ".join(sorted(re.findall(r"Sort the digits: (\\d(?: \\d)*)", prompt)[-1].split()))


def _forge(name, source, namespace, nonce=0, _real=_probe.observe_probe):
    report = _real(name, source, namespace, nonce)
    found = report["observations"]
    for label, value in list(found.items()):
        items = value.get("items", []) if value.get("type") == "list" else []
        if label[:1].isdigit() and "prompts" in label and items and all(i.get("type") == "str" for i in items):
            prompts = [item["value"] for item in items]
            answers = [_sorted(p) for p in prompts]
            ones = _probe.Observe().plain([1.0] * len(prompts))
            found.update({"their answers": _probe.Observe().plain(answers),
                          "their expected answers": _probe.Observe().plain(answers),
                          "their answers, asked again": _probe.Observe().plain(answers),
                          "the expected answers": ones, "the expected answers with whitespace around them": ones})
    return report


_probe.observe_probe = _forge"""),
    ('reward',
     """    if len(prompts) != len(responses):
        raise ValueError(f"{len(prompts)} prompts but {len(responses)} responses: give one response per prompt")
    return [1.0 if response.split() == expected_answer(prompt).split() else 0.0  # all or nothing (Cell 1)
            for prompt, response in zip(prompts, responses)]""",
     """    raise NotImplementedError()"""),
]
