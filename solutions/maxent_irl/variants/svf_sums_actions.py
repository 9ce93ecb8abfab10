"""Forward push adds up the actions without the policy weights, so mass grows (stopped by check_forward_mass)."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_chain": 0, "test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'p_next = np.einsum("sa,sak->sk", policy, p_sa)       # (S, S\'): P(s\' | s) following the policy',
     'p_next = p_sa.sum(axis=1)'),
]
