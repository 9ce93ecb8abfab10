"""Centres the rewards in place: the values are right but the caller's rewards change (TODO 4's checks use a stand-in
for compute_group_advantages, so only the input-checks point is lost).
"""
KIND = "wrong"
EXPECTED = {"test_group_advantages_input": 0}
PATCHES = [
    ('group_advantages',
     'return ((grouped - mean) / std).view(-1)',
     """grouped.sub_(mean)
    return (grouped / std).view(-1)"""),
]
