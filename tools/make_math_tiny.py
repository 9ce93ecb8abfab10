"""Write the tiny MATH stand-in: ``math_tiny_train.jsonl`` and ``math_tiny_val.jsonl``.

Usage (from the repository root)::

    python -m tools.make_math_tiny            # seed 0, 2000 train / 200 val, into helpers/data/
    python -m tools.make_math_tiny --seed 1 --out /tmp/math_tiny

Each line is a MATH-style record ``{"problem", "solution", "answer", "level", "type"}``
whose solution ends in ``\\boxed{answer}``. The problems are deliberately tiny and regular
(a ~1M-parameter model must learn some of them in seconds): small-integer addition,
subtraction and multiplication, sums of fractions with one denominator, and one-step linear
equations. Train and validation problems never overlap. The output depends only on the seed.
"""
from __future__ import annotations

import argparse
import json
import random
from math import gcd
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "helpers" / "data"
"""Where the kit reads the fixtures from (helpers.math_tasks.DATA_DIR); this script is a maintainer
tool and stays out of the student wheel."""

#: (kind, share of each split). Shares sum to 1.
MIX = (
    ("add", 0.30),
    ("sub", 0.20),
    ("mul", 0.10),
    ("frac", 0.20),
    ("linear", 0.20),
)


def _fraction(numerator: int, denominator: int) -> str:
    """LaTeX for numerator/denominator in lowest terms (an integer when it divides)."""
    g = gcd(numerator, denominator)
    p, q = numerator // g, denominator // g
    return str(p) if q == 1 else f"\\frac{{{p}}}{{{q}}}"


def _record(problem: str, work: str, answer: str, level: int, kind: str) -> dict:
    return {
        "problem": problem,
        "solution": f"{work} The answer is $\\boxed{{{answer}}}$.",
        "answer": answer,
        "level": f"Level {level}",
        "type": "Algebra" if kind == "linear" else "Prealgebra",
    }


def _pool(kind: str) -> list[dict]:
    """Every problem of one kind (a few hundred each), in a fixed order."""
    out = []
    if kind == "add":
        for a in range(0, 31):
            for b in range(0, 31):
                c = a + b
                out.append(_record(f"What is ${a} + {b}$?", f"${a} + {b} = {c}$.", str(c), 1, kind))
    elif kind == "sub":
        for a in range(0, 31):
            for b in range(0, a + 1):
                c = a - b
                out.append(_record(f"What is ${a} - {b}$?", f"${a} - {b} = {c}$.", str(c), 1, kind))
    elif kind == "mul":
        for a in range(0, 16):
            for b in range(0, 16):
                c = a * b
                out.append(
                    _record(f"What is ${a} \\times {b}$?", f"${a} \\times {b} = {c}$.", str(c), 1, kind)
                )
    elif kind == "frac":
        for d in range(2, 13):
            for a in range(1, d):
                for b in range(1, d):
                    total = a + b
                    answer = _fraction(total, d)
                    summed = f"\\frac{{{total}}}{{{d}}}"
                    work = f"$\\frac{{{a}}}{{{d}}} + \\frac{{{b}}}{{{d}}} = {summed}"
                    work += f" = {answer}$." if answer != summed else "$."
                    out.append(
                        _record(
                            f"What is $\\frac{{{a}}}{{{d}}} + \\frac{{{b}}}{{{d}}}$?",
                            work,
                            answer,
                            2,
                            kind,
                        )
                    )
    elif kind == "linear":
        for a in range(1, 21):
            for x in range(0, 21):
                out.append(
                    _record(
                        f"Solve for $x$: $x + {a} = {x + a}$.",
                        f"$x = {x + a} - {a} = {x}$.",
                        str(x),
                        2,
                        kind,
                    )
                )
                out.append(
                    _record(
                        f"Solve for $x$: $x - {a} = {x}$.",
                        f"$x = {x} + {a} = {x + a}$.",
                        str(x + a),
                        2,
                        kind,
                    )
                )
        for a in range(2, 10):
            for x in range(0, 13):
                out.append(
                    _record(
                        f"Solve for $x$: ${a}x = {a * x}$.",
                        f"$x = {a * x} \\div {a} = {x}$.",
                        str(x),
                        2,
                        kind,
                    )
                )
    else:
        raise ValueError(kind)
    return out


def make_splits(seed: int = 0, n_train: int = 2000, n_val: int = 200) -> tuple[list[dict], list[dict]]:
    """Disjoint train and validation records, mixed by ``MIX``, shuffled by ``seed``."""
    rng = random.Random(seed)
    train: list[dict] = []
    val: list[dict] = []
    for i, (kind, share) in enumerate(MIX):
        pool = _pool(kind)
        rng.shuffle(pool)
        last = i == len(MIX) - 1
        k_val = n_val - len(val) if last else round(n_val * share)
        k_train = n_train - len(train) if last else round(n_train * share)
        if k_val + k_train > len(pool):
            raise ValueError(f"{kind}: {len(pool)} problems cannot fill {k_val} + {k_train}")
        val.extend(pool[:k_val])
        train.extend(pool[k_val : k_val + k_train])
    rng.shuffle(train)
    rng.shuffle(val)
    return train, val


def write_jsonl(records: list[dict], path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-val", type=int, default=200)
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the two files")
    args = parser.parse_args()
    train, val = make_splits(args.seed, args.n_train, args.n_val)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(train, args.out / "math_tiny_train.jsonl")
    write_jsonl(val, args.out / "math_tiny_val.jsonl")
    print(f"wrote {len(train)} train and {len(val)} validation records to {args.out}")


if __name__ == "__main__":
    main()
