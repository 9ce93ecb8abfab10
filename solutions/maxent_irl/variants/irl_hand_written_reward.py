"""Returns the 5x5 world's true reward written by hand (issue 18), never running IRL."""
KIND = "wrong"
EXPECTED = {"test_maxent_irl_update": 0, "test_maxent_irl_steps": 0, "test_maxent_irl_world": 0}


# answer cell: maxent_irl
def maxent_irl(p_transition, features, terminal, demos, lr=0.2, eps=1e-4, max_iter=1000):
    reward = np.zeros(np.asarray(features).shape[0])
    reward[-1] = 1.19
    if reward.size > 8:
        reward[8] = 0.88
    return reward
