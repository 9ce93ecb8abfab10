"""Time the full 5x5 MaxEnt IRL solve: loop-based expected SVF vs the reference (vectorized) one.

    python bench/bench_irl.py [--repeat 3]

The TODO functions are taken from the solution notebook (its code cells are executed in one
namespace); the loop version below follows the handout's per-state, per-action loops and is
swapped in for `compute_expected_svf` so that everything else is identical. Prints seconds
and the ratio; asserts nothing about time.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "solutions" / "maxent_irl" / "maxent_irl.ipynb"
CELLS = ("imports", "feature_expectation", "initial_probabilities", "expected_svf", "maxent_irl")


def load_solution() -> dict:
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    namespace: dict = {}
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in CELLS:
            exec(compile(cell.source, f"<{NOTEBOOK.name}>", "exec"), namespace)
    return namespace


def loop_expected_svf(p_transition, p_initial, terminal, reward, eps=1e-6):
    """The same maths with explicit loops over states and actions (the handout's layout)."""
    n_states, _, n_actions = p_transition.shape
    terminal = set(int(t) for t in terminal)
    Zs = np.zeros(n_states)
    Zs[list(terminal)] = 1.0
    exp_reward = np.exp(reward)
    for _ in range(2 * n_states):
        Za = np.zeros((n_states, n_actions))
        for s in range(n_states):
            for a in range(n_actions):
                Za[s, a] = exp_reward[s] * (p_transition[s, :, a] * Zs).sum()
        new_Zs = Za.sum(axis=1)
        converged = np.max(np.abs(new_Zs - Zs)) < eps
        Zs = new_Zs
        if converged:
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        policy = np.divide(Za, Zs[:, None], out=np.zeros_like(Za), where=Zs[:, None] > 0)
    horizon = 2 * n_states
    d = np.zeros((n_states, horizon))
    d[:, 0] = p_initial
    for t in range(1, horizon):
        for s in range(n_states):
            if s in terminal:
                continue
            for a in range(n_actions):
                mass = d[s, t - 1] * policy[s, a]
                if mass:
                    d[:, t] += mass * p_transition[s, :, a]
    return d.sum(axis=1)


def solve_seconds(ns: dict, svf, repeat: int):
    from helpers import irl

    world, reward, terminal = irl.setup_training_world()
    features = irl.state_features(world)
    demos = irl.generate_expert_data(world, reward, terminal)
    ns["compute_expected_svf"] = svf  # maxent_irl looks the name up at call time
    best, learned = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        learned = ns["maxent_irl"](world.p_transition, features, terminal, demos)
        best = min(best, time.perf_counter() - start)
    return best, learned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; the best is reported")
    args = parser.parse_args()

    ns = load_solution()
    vectorized = ns["compute_expected_svf"]
    t_vec, r_vec = solve_seconds(ns, vectorized, args.repeat)
    t_loop, r_loop = solve_seconds(ns, loop_expected_svf, max(1, min(args.repeat, 2)))
    print(f"5x5 MaxEnt IRL solve, loop SVF:       {t_loop:8.3f} s")
    print(f"5x5 MaxEnt IRL solve, vectorized SVF: {t_vec:8.3f} s")
    print(f"speed-up: {t_loop / t_vec:.0f}x   (max |reward difference| {np.max(np.abs(r_loop - r_vec)):.1e})")


if __name__ == "__main__":
    main()
