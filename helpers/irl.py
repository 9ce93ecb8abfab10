"""Scaffolding for the ``maxent_irl`` assignment: grid worlds, demonstrations, an expert.

Nothing in this module is an answer to a TODO. It provides what the notebook treats as
given: the dynamics of a small (icy) grid world, the containers for demonstrations, an
expert that acts near-optimally under a known reward, and the code that samples the
demonstration set the assignment learns from.

Conventions used throughout
---------------------------
* States are integers ``s = y * size + x``; ``(x, y)`` is the cell's column and row.
* Actions are indices into ``ACTIONS``: ``0`` = +x, ``1`` = -x, ``2`` = +y, ``3`` = -y.
* ``p_transition[s_from, s_to, a]`` is ``P(s_to | s_from, a)``; each ``[s_from, :, a]`` sums to 1.
* ``reward`` is a vector with one entry per state.

The sampling code is deterministic for a given seed: it draws from one
``numpy.random.Generator`` in a fixed order (start state, then per step an action followed by
the next state) from float32 probability tables, so every run sees the same demonstrations.

Two small checks, :func:`check_sweep_shape` and :func:`check_forward_mass`, are called from the
skeleton of ``compute_expected_svf`` in the notebook: they turn a wrong shape or a forward pass
that creates probability mass into an error that names the TODO to look at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ACTIONS",
    "GridWorld",
    "IcyGridWorld",
    "state_features",
    "Transition",
    "Trajectory",
    "generate_trajectory",
    "generate_trajectories",
    "value_iteration",
    "intended_next_states",
    "stochastic_policy_from_value",
    "setup_training_world",
    "Expert",
    "generate_expert_data",
    "check_sweep_shape",
    "check_forward_mass",
]

#: Unit moves, indexed by action: right, left, down (+y), up (-y).
ACTIONS: tuple[tuple[int, int], ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))


# ---------------------------------------------------------------------------------------
# Grid world dynamics
# ---------------------------------------------------------------------------------------


class GridWorld:
    """A ``size x size`` grid with four deterministic moves; moving into a wall stays put."""

    def __init__(self, size: int):
        if size < 2:
            raise ValueError(f"size must be at least 2, got {size}")
        self.size = int(size)
        self.actions = list(ACTIONS)
        self.n_actions = len(self.actions)
        self.n_states = self.size * self.size
        self.p_transition = self._build_transition_table()

    # -- coordinates -------------------------------------------------------------------
    def state_index_to_point(self, state: int) -> tuple[int, int]:
        return state % self.size, state // self.size

    def state_point_to_index(self, point: tuple[int, int]) -> int:
        x, y = point
        return y * self.size + x

    def _clip_point(self, point: tuple[int, int]) -> tuple[int, int]:
        x, y = point
        return min(max(x, 0), self.size - 1), min(max(y, 0), self.size - 1)

    def _step_intended(self, state: int, action: int) -> int:
        """The state the action leads to when nothing slips."""
        x, y = self.state_index_to_point(state)
        dx, dy = self.actions[action]
        return self.state_point_to_index(self._clip_point((x + dx, y + dy)))

    # -- transition table --------------------------------------------------------------
    def _grids(self):
        """Broadcastable coordinate arrays for the ``[s_from, s_to, a]`` table.

        Returns ``fx, fy`` of shape (S, 1, 1), ``tx, ty`` of shape (1, S, 1) and
        ``ax, ay`` of shape (1, 1, A).
        """
        s = np.arange(self.n_states)
        x, y = s % self.size, s // self.size
        moves = np.asarray(self.actions)
        fx, fy = x[:, None, None], y[:, None, None]  # (S, 1, 1)
        tx, ty = x[None, :, None], y[None, :, None]  # (1, S, 1)
        ax, ay = moves[None, None, :, 0], moves[None, None, :, 1]  # (1, 1, A)
        return fx, fy, tx, ty, ax, ay

    def _build_transition_table(self) -> np.ndarray:
        fx, fy, tx, ty, ax, ay = self._grids()
        hits_target = (fx + ax == tx) & (fy + ay == ty)  # (S, S, A) in-bounds intended move
        same_cell = (fx == tx) & (fy == ty)  # (S, S, 1)
        off_grid = ~((0 <= fx + ax) & (fx + ax < self.size) & (0 <= fy + ay) & (fy + ay < self.size))
        stays = same_cell & off_grid  # (S, S, A) bumping into a wall
        table = np.where(hits_target | stays, 1.0, 0.0)  # (S, S, A)
        return table.astype(np.float32)


class IcyGridWorld(GridWorld):
    """Grid world where, with probability ``p_slip``, the move is replaced by a uniformly
    random one of the four moves (which may be the intended one, or a wall bump)."""

    def __init__(self, size: int, p_slip: float):
        self.p_slip = float(p_slip)
        super().__init__(size)

    def _build_transition_table(self) -> np.ndarray:
        fx, fy, tx, ty, ax, ay = self._grids()
        n, p, k = self.size, self.p_slip, self.n_actions

        hits_target = (fx + ax == tx) & (fy + ay == ty)  # (S, S, A)
        neighbour = np.abs(fx - tx) + np.abs(fy - ty) == 1  # (S, S, 1)
        same_cell = (fx == tx) & (fy == ty)  # (S, S, 1)
        off_grid = ~((0 <= fx + ax) & (fx + ax < n) & (0 <= fy + ay) & (fy + ay < n))  # (S, 1, A)
        x_border = ~((0 < fx) & (fx < n - 1))  # (S, 1, 1) on the left or right column
        y_border = ~((0 < fy) & (fy < n - 1))  # (S, 1, 1) on the top or bottom row
        corner = x_border & y_border
        border = x_border | y_border

        # Probabilities as Python floats, computed in the same order as the per-triple rule in
        # tests/test_irl.py, so the float32 table matches that rule bit for bit.
        p_intended = 1.0 - p + p / k
        p_neighbour = p / k
        p_bump_corner = 1.0 - p + 2.0 * p / k
        p_slip_corner = 2.0 * p / k

        # np.select takes the first matching condition, like an if/elif chain over the cases.
        shape = (self.n_states, self.n_states, k)
        conditions = [
            hits_target,
            neighbour,
            same_cell & off_grid & corner,
            same_cell & off_grid,
            same_cell & corner,
            same_cell & border,
        ]
        values = [p_intended, p_neighbour, p_bump_corner, p_intended, p_slip_corner, p_neighbour]
        conditions = [np.broadcast_to(c, shape) for c in conditions]
        table = np.select(conditions, values, default=0.0)  # (S, S, A) float64
        return table.astype(np.float32)


def state_features(world: GridWorld) -> np.ndarray:
    """One-hot features: ``phi(s)`` is the ``s``-th unit vector, shape (S, S)."""
    return np.eye(world.n_states, dtype=np.float32)


# ---------------------------------------------------------------------------------------
# Demonstrations
# ---------------------------------------------------------------------------------------


@dataclass
class Transition:
    """One step ``s_from --action--> s_to``."""

    s_from: int
    action: int
    s_to: int


class Trajectory:
    """A list of transitions; ``state_sequence`` gives the visited states in order."""

    def __init__(self, transitions: list[Transition]):
        self._transitions = list(transitions)

    def transitions(self) -> list[Transition]:
        return self._transitions

    def state_sequence(self) -> np.ndarray:
        """``[s_0, s_1, ..., s_T]`` (empty for an empty trajectory), dtype int64."""
        states = [tr.s_from for tr in self._transitions]
        if self._transitions:
            states.append(self._transitions[-1].s_to)
        return np.asarray(states, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._transitions)

    def __repr__(self) -> str:
        return f"Trajectory(states={self.state_sequence().tolist()})"


def generate_trajectory(
    world: GridWorld,
    policy: np.ndarray,
    start: int,
    terminal: Iterable[int],
    rng: np.random.Generator,
    max_steps: int = 100_000,
) -> Trajectory:
    """Roll out ``policy`` (shape (S, A), rows are action probabilities) from ``start``
    until a terminal state is reached."""
    terminal = {int(t) for t in np.atleast_1d(np.asarray(list(terminal)))}
    state = start
    transitions = []
    while int(state) not in terminal:
        if len(transitions) >= max_steps:
            raise RuntimeError(f"no terminal state reached within {max_steps} steps")
        action = rng.choice(world.n_actions, p=policy[state])
        next_state = rng.choice(world.n_states, p=world.p_transition[state, :, action])
        transitions.append(Transition(state, action, next_state))
        state = next_state
    return Trajectory(transitions)


def generate_trajectories(
    world: GridWorld,
    policy: np.ndarray,
    start_states: np.ndarray,
    terminal: Iterable[int],
    n_trajectories: int,
    seed: int = 0,
) -> list[Trajectory]:
    """Sample ``n_trajectories`` demonstrations; each start state is drawn uniformly from
    ``start_states``. One generator, seeded once, serves the whole set."""
    rng = np.random.default_rng(seed)
    terminal = list(np.atleast_1d(np.asarray(list(terminal))))
    demos = []
    for _ in range(n_trajectories):
        start = rng.choice(start_states)
        demos.append(generate_trajectory(world, policy, start, terminal, rng))
    return demos


# ---------------------------------------------------------------------------------------
# The expert
# ---------------------------------------------------------------------------------------


def value_iteration(p_transition: np.ndarray, reward: np.ndarray, discount: float, eps: float = 1e-4) -> np.ndarray:
    """Optimal state values ``V(s) = max_a [r(s) + discount * sum_s' P(s'|s,a) V(s')]``.

    Iterates until the largest change is at most ``eps``. Computed in float32, so the expert
    (and hence the demonstrations) are the same on every machine and every run.
    """
    n_states, _, n_actions = p_transition.shape
    reward = np.asarray(reward, dtype=np.float32)
    v = np.zeros(n_states, dtype=np.float32)  # (S,)
    delta = np.inf
    while delta > eps:
        q = np.empty((n_states, n_actions), dtype=np.float32)  # (S, A)
        for a in range(n_actions):  # one matrix-vector product per action
            # a fixed operation order, (discount * P_a) @ v in float32: the demonstrations depend on it
            q[:, a] = reward + discount * p_transition[:, :, a] @ v
        v_new = q.max(axis=1)
        delta = float(np.max(np.abs(v_new - v)))
        v = v_new
    return v


def intended_next_states(world: GridWorld) -> np.ndarray:
    """``nxt[s, a]``: the state action ``a`` leads to from ``s`` without slipping, (S, A)."""
    s = np.arange(world.n_states)
    x, y = s % world.size, s // world.size
    moves = np.asarray(world.actions)  # (A, 2)
    nx = np.clip(x[:, None] + moves[None, :, 0], 0, world.size - 1)  # (S, A)
    ny = np.clip(y[:, None] + moves[None, :, 1], 0, world.size - 1)  # (S, A)
    return ny * world.size + nx


def stochastic_policy_from_value(world: GridWorld, value: np.ndarray, sharpness: float = 50.0) -> np.ndarray:
    """The expert: ``pi(a|s)`` proportional to ``exp(sharpness * V(next(s, a)))``.

    ``next(s, a)`` is the intended (non-slipping) successor. Written as ``exp(V) ** 50`` the
    preference overflows float64 once ``V`` exceeds about 14; this is the same distribution
    computed as a max-shifted softmax, finite for any ``V``.
    Returns float32 probabilities of shape (S, A).
    """
    value = np.asarray(value, dtype=np.float64)
    logits = sharpness * value[intended_next_states(world)]  # (S, A)
    logits -= logits.max(axis=1, keepdims=True)  # (S, A), each row's max is 0
    prefs = np.exp(logits)  # (S, A), in (0, 1]
    return (prefs / prefs.sum(axis=1, keepdims=True)).astype(np.float32)


# ---------------------------------------------------------------------------------------
# The assignment's problem
# ---------------------------------------------------------------------------------------


def setup_training_world(size: int = 5, p_slip: float = 0.2):
    """The notebook's 5x5 icy world: reward 1 in the far corner (the only terminal state)
    and 0.65 at state 8; zero elsewhere. Returns ``(world, reward, terminal)``."""
    world = IcyGridWorld(size=size, p_slip=p_slip)
    reward = np.zeros(world.n_states, dtype=np.float32)
    reward[-1] = 1.0
    reward[8] = 0.65
    terminal = np.array([world.n_states - 1], dtype=np.int64)
    return world, reward, terminal


@dataclass(frozen=True)
class Expert:
    """How the expert of :func:`generate_expert_data` acts and how many walks it records."""

    discount: float = 0.9
    n_trajectories: int = 200
    seed: int = 11
    sharpness: float = 50.0
    """How greedily the expert follows its values (a softmax's inverse temperature)."""
    start_states: tuple[int, ...] = (0,)


def generate_expert_data(world: GridWorld, reward: np.ndarray, terminal: Sequence[int],
                         expert: Expert = Expert()) -> list[Trajectory]:
    """Demonstrations from the expert for ``reward``, all starting at state 0 by default."""
    value = value_iteration(world.p_transition, reward, expert.discount)
    policy = stochastic_policy_from_value(world, value, sharpness=expert.sharpness)
    starts = np.asarray(expert.start_states, dtype=np.int64)
    return generate_trajectories(world, policy, starts, terminal, expert.n_trajectories, expert.seed)


# ---------------------------------------------------------------------------------------
# Checks called from the notebook's skeleton of compute_expected_svf (TODO 3)
# ---------------------------------------------------------------------------------------


def check_sweep_shape(za, n_states: int, n_actions: int, todo: str = "TODO 3 (backward step)") -> None:
    """Raise ``ValueError`` naming ``todo`` unless ``za`` has shape ``(n_states, n_actions)``.

    One sweep of the backward pass produces one partition value per state and action; a
    flattened or transposed array would otherwise fail later, in a line that is not the
    student's, with a message about matrix shapes.
    """
    shape = np.shape(za)
    if shape != (n_states, n_actions):
        raise ValueError(f"{todo}: Za must have shape (S, A) = ({n_states}, {n_actions}), one partition value "
                         f"Z_(s,a) per state s and action a; yours has shape {shape}")


def check_forward_mass(d, shape=None, todo: str = "TODO 3 (forward push)", rtol: float = 1e-5) -> None:
    """Raise ``ValueError`` naming ``todo`` when the rows of ``d`` are not visitation distributions
    of trajectories that can only end.

    ``d[t, s]`` is the probability of being in ``s`` at step ``t``. Each step moves the mass of
    the non-terminal states and drops the mass of the terminal ones, so the total of ``d[t]``
    can stay the same or shrink, never grow, and no entry is negative. Rows that hold NaN or inf
    (an overflowed backward pass, see the notebook's extension) are not judged here. ``shape``,
    when given, is the shape ``d`` must have, ``(T, S)``. ``rtol`` leaves room for dynamics stored
    in float32, whose rows sum to 1 only up to about 1e-7.
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 2 or (shape is not None and d.shape != tuple(shape)):
        want = f"shape {tuple(shape)}" if shape is not None else "a (T, S) array"
        raise ValueError(f"{todo}: d must stay {want}, d[t, s] = probability of being in s at step t; "
                         f"yours has shape {d.shape}")
    with np.errstate(all="ignore"):                # NaN entries compare as False: not judged
        negative = np.argwhere(d < -1e-12)
        if negative.size:
            t, s = negative[0]
            raise ValueError(f"{todo}: d[{t}, {s}] = {d[t, s]:.3g} is negative; probabilities of being in a state "
                             "cannot be, so check the terms your push adds up")
        totals = d.sum(axis=1)                                                   # (T,)
        grows = np.flatnonzero(totals[1:] > totals[:-1] * (1.0 + rtol) + 1e-12)
    if grows.size:
        t = int(grows[0]) + 1
        raise ValueError(
            f"{todo}: d[{t}] holds probability mass {totals[t]:.4g} but d[{t - 1}] held only {totals[t - 1]:.4g}: "
            "the push creates mass. A step only moves the mass that is already there: from each non-terminal "
            "state it is split over the actions by pi(a|s), whose row sums to 1, and then over next states by "
            "the dynamics. Look for actions added up without their policy weights, or mass moved twice.")
