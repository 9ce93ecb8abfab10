"""Forward push averages over actions instead of following the MaxEnt policy."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'p_next = np.einsum("sa,sak->sk", policy, p_sa)       # (S, S\'): P(s\' | s) following the policy',
     'p_next = p_sa.mean(axis=1)'),
]
