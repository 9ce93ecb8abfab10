"""Backward step weights by exp(r(s')) of the next state instead of exp(r(s))."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     'Za = (p_rows @ (exp_reward * Zs)).reshape(n_states, n_actions)'),
]
