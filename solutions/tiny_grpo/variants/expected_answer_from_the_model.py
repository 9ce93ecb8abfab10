"""A circular task: expected_answer reaches for the model library (to define the answer as the adapter's own
greedy output). The grader runs expected_answer apart from the model, where torch is not installed, so every
check that reads the task's answers fails: no task built around the submitted adapter pays."""
KIND = "wrong"
EXPECTED = {"test_dataset": 0, "test_expected_answer": 0, "test_reward": 0, "test_sanity_table": 0,
            "test_eval_improvement": 0}
PATCHES = [
    ('dataset',
     'return " ".join(sorted(found[-1].split()))',
     """import torch  # noqa: F401 - the adapter's greedy answer would come next
    return " ".join(sorted(found[-1].split()))"""),
]
