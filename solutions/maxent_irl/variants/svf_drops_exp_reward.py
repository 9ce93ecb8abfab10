"""Backward step without the factor exp(r(s)): the SVF ignores the reward."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     'Za = (p_rows @ Zs).reshape(n_states, n_actions)'),
]
