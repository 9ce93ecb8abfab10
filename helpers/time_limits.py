"""A wall-clock budget for one call, from a Jupyter kernel's main thread or from a worker thread.

On the main thread of a POSIX process :func:`time_budget` interrupts the call with a timer signal
(:class:`Timeout`); elsewhere no signal can reach it, so :func:`call_with_deadline` runs it in a daemon
thread and stops waiting. ``math_tasks`` times every answer check with them.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator


class Timeout(BaseException):
    """Raised by our own timer; a BaseException so math_verify's handlers let it through."""


def can_use_alarm() -> bool:
    return (
        os.name == "posix"
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise ``Timeout`` after ``seconds`` (main thread on POSIX); no-op elsewhere.

    One timer covers the whole reward call. math_verify's own per-step timeouts are always
    switched off (``parsing_timeout=None``, ``timeout_seconds=None``): they use
    ``signal.alarm`` too, and finishing one would cancel this outer timer.
    """
    if not can_use_alarm() or not seconds or seconds <= 0:
        yield
        return

    def _on_alarm(signum, frame):  # noqa: ARG001
        raise Timeout()

    try:
        old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main interpreter after all
        yield
        return
    started = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:  # somebody else's timer was running: give back what is left
            remaining = max(old_delay - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, old_interval)


def call_with_deadline(fn, args: tuple, seconds: float):
    """``fn(*args)`` in a daemon thread; ``None`` if it is not done after ``seconds``.

    Used off the main thread, where no signal can interrupt math_verify. A call that runs
    over keeps running in the background (Python threads cannot be killed) but the caller
    gets its answer on time; the screens in ``_too_costly`` make that rare.
    """
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException:  # noqa: BLE001  (reported as "no value")
            pass

    worker = threading.Thread(target=target, name="r1_zero_reward_fn", daemon=True)
    worker.start()
    worker.join(seconds)
    return box.get("value")
