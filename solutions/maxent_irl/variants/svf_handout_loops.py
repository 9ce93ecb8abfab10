"""The handout's loops over states and actions in both passes."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     """Za = np.zeros((n_states, n_actions))
        for s in range(n_states):
            for a in range(n_actions):
                Za[s, a] = exp_reward[s] * (p_transition[s, :, a] * Zs).sum()"""),
    ('expected_svf',
     """    p_next = np.einsum("sa,sak->sk", policy, p_sa)       # (S, S'): P(s' | s) following the policy
    p_next[is_terminal] = 0.0                            # a trajectory ends at a terminal state
    for t in range(1, horizon):
        d[t] = d[t - 1] @ p_next                         # (S',)""",
     """    for t in range(1, horizon):
        for s_prev in range(n_states):
            if is_terminal[s_prev]:
                continue
            for a in range(n_actions):
                prob = d[t - 1, s_prev] * policy[s_prev, a]
                if prob == 0:
                    continue
                d[t] += prob * p_transition[s_prev, :, a]"""),
]
