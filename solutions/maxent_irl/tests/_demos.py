"""Demonstrations for the probes of TODOs 1 and 2, built from lists of visited states."""
from helpers.irl import Trajectory, Transition


def demo(states: list[int]) -> Trajectory:
    """The trajectory that visits ``states`` in order (an empty one for fewer than two states)."""
    return Trajectory([Transition(a, 0, b) for a, b in zip(states[:-1], states[1:], strict=True)])
