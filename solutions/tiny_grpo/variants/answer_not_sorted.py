"""Expected_answer returns the digits in prompt order: the task becomes copying (the reward hack), which the sanity
table and the sorting adapter contradict.
"""
KIND = "wrong"
EXPECTED = {"test_sanity_table": 0, "test_eval_improvement": 0}
PATCHES = [
    ('dataset',
     'return " ".join(sorted(found[-1].split()))',
     'return " ".join(found[-1].split())'),
]
