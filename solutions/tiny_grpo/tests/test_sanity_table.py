"""Cell 4, SANITY_CASES (1 point): at least 8 (prompt, response, expected reward, note) rows, each
scoring what it claims under get_reward, with a 1.0 row, a 0.0 row and an empty or blank response.
Judge: rules (the table is the student's)."""
import math

from _rules import numbers

TODO = "Cell 4, SANITY_CASES"
TABLE, REWARDS = "SANITY_CASES (prompt, response, claimed reward)", "get_reward of its rows"


def probe(nb, observe):
    rows = observe(TABLE, lambda: [list(row)[:3] for row in nb.SANITY_CASES])
    if rows:
        observe(REWARDS, lambda: nb.get_reward([row[0] for row in rows], [row[1] for row in rows]))


def judge(check):
    table = check.got(TABLE)
    well_formed = all(len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], str)
                      and isinstance(r[2], (int, float)) and math.isfinite(r[2]) for r in table)
    if not check.expect(well_formed, "each sanity row must be (prompt, response, expected reward, note)"):
        return
    check.expect(len(table) >= 8, f"the sanity table needs at least 8 rows ({len(table)} now)")
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
