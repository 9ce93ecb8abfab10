"""Plots for the ``maxent_irl`` assignment. Every function returns the matplotlib Figure.

Grids are drawn as images with state ``s = y * size + x`` at column ``x`` and row ``y``
(row 0 at the top), the same layout as ``reward.reshape(size, size)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["plot_reward_comparison", "plot_policy", "plot_visitation", "plot_feature_gap"]


def _grid(values: np.ndarray, size: int) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(size, size)


def _annotate(ax, grid: np.ndarray, fmt: str = "{:.2f}") -> None:
    """Write each cell's value in it, dark text on light cells and vice versa."""
    lo, hi = float(np.min(grid)), float(np.max(grid))
    mid = 0.5 * (lo + hi)
    for (y, x), v in np.ndenumerate(grid):
        ax.text(x, y, fmt.format(v), ha="center", va="center", fontsize=7,
                color="black" if v > mid else "white")


def _heatmaps(panels: Sequence[tuple], size: int, suptitle: str | None, cbar_label: str):
    """Side-by-side heatmaps that share one colour scale."""
    grids = [_grid(values, size) for _, values in panels]
    vmin = min(float(g.min()) for g in grids)
    vmax = max(float(g.max()) for g in grids)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    axes = axes[0]
    image = None
    for ax, (title, _), grid in zip(axes, panels, grids, strict=True):
        image = ax.imshow(grid, cmap="viridis", vmin=vmin, vmax=vmax)
        _annotate(ax, grid)
        ax.set_title(title)
        ax.set_xticks(range(size))
        ax.set_yticks(range(size))
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label=cbar_label)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_reward_comparison(world, expert_reward: np.ndarray, learned_reward: np.ndarray,
                           titles: Sequence[str] = ("expert reward", "learned reward")):
    """Expert and learned reward as heatmaps on one colour scale."""
    return _heatmaps([(titles[0], expert_reward), (titles[1], learned_reward)], world.size,
                     None, "reward")


def plot_visitation(world, empirical: np.ndarray, expected: np.ndarray,
                    titles: Sequence[str] = ("demonstrations (empirical)", "learned reward (expected)")):
    """Visits per trajectory to each state: counted in the demos vs predicted by the model."""
    return _heatmaps([(titles[0], empirical), (titles[1], expected)], world.size,
                     "state visitation frequency", "visits per trajectory")


def plot_policy(world, policy: np.ndarray, background: np.ndarray | None = None,
                terminal: Sequence[int] = (), title: str = "policy", ax=None):
    """One arrow per action and state, its length proportional to ``policy[s, a]``.

    ``background`` (one value per state, e.g. the reward) is drawn underneath.
    Terminal states are marked with a square and get no arrows.
    """
    size = world.size
    policy = np.asarray(policy, dtype=np.float64)  # (S, A)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 4.6))
    else:
        fig = ax.figure
    if background is not None:
        image = ax.imshow(_grid(background, size), cmap="viridis")
        fig.colorbar(image, ax=ax, shrink=0.8)
    else:
        ax.imshow(np.zeros((size, size)), cmap="Greys", vmin=0, vmax=1)
    terminal = {int(t) for t in terminal}
    for s in range(world.n_states):
        x, y = s % size, s // size
        if s in terminal:
            ax.add_patch(plt.Rectangle((x - 0.3, y - 0.3), 0.6, 0.6, fill=False, ec="red", lw=2))
            continue
        for a, (dx, dy) in enumerate(world.actions):
            length = 0.42 * policy[s, a]
            if length < 0.02:
                continue
            ax.arrow(x, y, dx * length, dy * length, width=0.025, head_width=0.12,
                     head_length=min(0.1, length), length_includes_head=True, color="white", ec="black",
                     lw=0.3)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    ax.set_xticks(range(size))
    ax.set_yticks(range(size))
    ax.set_title(title)
    return fig


def plot_feature_gap(histories: Mapping[str, Sequence[float]], ax=None, log: bool = True,
                     title: str = "feature gap per iteration"):
    """``max_i |mu_E - mu_model|_i`` per optimizer iteration, one line per run."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4))
    else:
        fig = ax.figure
    for label, gaps in histories.items():
        gaps = np.asarray(list(gaps), dtype=np.float64)
        ax.plot(np.arange(1, gaps.size + 1), gaps, label=f"{label} (final {gaps[-1]:.3f})")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel(r"$\max_i\,|\mu_E - \mu_\omega|_i$")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig
