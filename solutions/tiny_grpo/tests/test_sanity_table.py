"""Cell 4, SANITY_CASES (1 point): at least 8 (prompt, response, expected reward, note) rows, each
scoring what it claims under get_reward, with a 1.0 row, a 0.0 row and an empty or blank response. The
kernel reports the table; get_reward scores its rows apart from the notebook and from any model
(``autograder/grading/task_process.py``). Judge: rules (the table is the student's)."""
import math

from _rules import apart_failed, numbers

TODO = "Cell 4, SANITY_CASES"
POINTS = 1
TABLE, REWARDS = "SANITY_CASES (prompt, response, claimed reward)", "get_reward of its rows"
TASK_CELLS, TASK_FUNCTIONS = ("dataset", "reward"), ("expected_answer", "get_reward")
MAX_ROWS = 1000


def probe(nb, observe):
    observe(TABLE, lambda: [list(row)[:3] for row in nb.SANITY_CASES])


def task_observations(got: dict, task) -> dict:
    table = got.get(TABLE)
    if not isinstance(table, list) or not 0 < len(table) <= MAX_ROWS or not all(
            isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[1], str)
            for row in table):
        return {}
    return {REWARDS: task.call("get_reward", [([row[0] for row in table], [row[1] for row in table])])[0]}


def judge(check):
    table = check.got(TABLE)
    well_formed = all(len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], str)
                      and isinstance(r[2], (int, float)) and math.isfinite(r[2]) for r in table)
    if not check.expect(well_formed, "each sanity row must be (prompt, response, expected reward, note)"):
        return
    check.expect(8 <= len(table) <= MAX_ROWS, f"the sanity table needs 8 to {MAX_ROWS} rows ({len(table)} now)")
    if apart_failed(check, REWARDS, "get_reward"):
        return
    rewards = numbers(check.got(REWARDS))
    wrong = [i for i, (r, row) in enumerate(zip(rewards or [], table, strict=False)) if not abs(r - row[2]) < 1e-6]
    check.expect(rewards is not None and len(rewards) == len(table) and not wrong,
                 "every sanity row must score what the table claims"
                 + (f" (row {wrong[0] + 1} scores {rewards[wrong[0]]:.4g}, claims {table[wrong[0]][2]:.4g})"
                    if wrong else ""))
    claimed = {float(row[2]) for row in table}
    check.expect({1.0, 0.0} <= claimed, "the sanity table must hold a row that scores 1.0 and one that scores 0.0")
    check.expect(any(not row[1].strip() for row in table),
                 "the sanity table must include an empty or whitespace-only response")
