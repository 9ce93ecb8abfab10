"""TODO 1, rule 4: a float32 torch tensor of shape [len(responses)], [0] for no responses, and a batch
scored as its responses one by one."""
from autograder.compare import difference
from autograder.kernel.probe import FAILED

TODO = "TODO 1 (format reward, rule 4)"
POINTS = 1

TEXTS = ["<think>\nr\n</think>\n<answer>\n1\n</answer>", "plain text", "<think>\nr\n</think>"]
SIZES = {"three responses": TEXTS, "one response": TEXTS[:1], "no responses": []}


def describe_result(value) -> dict:
    """The result's type, dtype and shape, read without calling anything of the student's."""
    kind = type(value)
    shape = getattr(value, "shape", None)
    return {"type": f"{kind.__module__}.{kind.__qualname__}", "dtype": str(getattr(value, "dtype", None)),
            "shape": list(shape) if shape is not None else None}


def probe(nb, observe):
    fr = nb.format_reward
    for label, texts in SIZES.items():
        result = observe(f"scores of {label}", fr, list(texts))
        observe.value(f"type, dtype and shape for {label}", describe_result(result) if result is not FAILED else None)
    for i, text in enumerate(TEXTS):
        observe(f"response {i} alone", fr, [text])


def judge(check):
    calls = [f"scores of {label}" for label in SIZES] + [f"response {i} alone" for i in range(len(TEXTS))]
    failed = [label for label in calls if (check.raw(label) or {}).get("type") == "error"]
    for label in failed:                  # an error is the message; type and shape are not there to check
        check.same(label)
    if failed:
        return
    for label in SIZES:
        check.same(f"type, dtype and shape for {label}")
    batch = check.raw("scores of three responses")
    one_by_one = [check.got(f"response {i} alone") for i in range(len(TEXTS))]
    flat = {"type": "list", "items": [{"type": "float", "value": float(v)} for s in one_by_one for v in _flat(s)]}
    differs = difference(batch, flat)
    check.expect(differs is None, f"a batch must score like its responses one by one: {differs}")


def _flat(value) -> list:
    return [v for item in value for v in _flat(item)] if isinstance(value, list) else [value]


HINTS = {f"type, dtype and shape for {label}": "return torch.tensor(scores, dtype=torch.float32): one score per "
                                              "response, an empty tensor of shape [0] for an empty list"
         for label in SIZES}
