"""MATH problems for ``math_grpo``: from the hub (profile ``full``), from a local copy
(``$COURSE_MATH_SOURCE``), or the kit's synthetic tiny set (profile ``tiny``), with the line that says
where they come from and on what terms (:func:`data_note`)."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from helpers.math_answers import extract_boxed_answer

DATA_DIR = Path(__file__).resolve().parent / "data"

#: Hub datasets tried in order for the ``full`` profile. Each entry: (dataset id, configs or
#: None). The MATH set has been re-hosted several times; add a mirror here when one vanishes.
MATH_HUB_SOURCES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    (
        "EleutherAI/hendrycks_math",
        (
            "algebra",
            "counting_and_probability",
            "geometry",
            "intermediate_algebra",
            "number_theory",
            "prealgebra",
            "precalculus",
        ),
    ),
    ("hendrycks/competition_math", None),
    ("qwedsacf/competition_math", None),
)

_SPLIT_ALIASES = {
    "train": "train",
    "validation": "test",
    "val": "test",
    "valid": "test",
    "test": "test",
}


def _record(row: dict) -> dict:
    solution = row.get("solution", "")
    return {
        "problem": row.get("problem", ""),
        "solution": solution,
        "answer": row.get("answer") or extract_boxed_answer(solution) or "",
        "level": row.get("level", ""),
        "type": row.get("type", ""),
    }


def _is_held_out(problem: str) -> bool:
    """Deterministic 5 000-ish / 7 500-ish split for a mirror that only has ``train``."""
    return int(hashlib.sha1(problem.encode("utf-8")).hexdigest(), 16) % 5 < 2


def _load_math_from_hub(split: str) -> list[dict]:
    import datasets

    hub_split = _SPLIT_ALIASES[split]
    errors = []
    for dataset_id, configs in MATH_HUB_SOURCES:
        try:
            rows: list[dict] = []
            for config in configs or (None,):
                available = datasets.get_dataset_split_names(dataset_id, config)
                if hub_split in available:
                    rows.extend(datasets.load_dataset(dataset_id, config, split=hub_split))
                elif available == ["train"]:
                    everything = datasets.load_dataset(dataset_id, config, split="train")
                    keep_held_out = hub_split == "test"
                    rows.extend(
                        r for r in everything if _is_held_out(r["problem"]) == keep_held_out
                    )
                else:
                    raise ValueError(f"no split {hub_split!r} (has {available})")
            return [_record(dict(r)) for r in rows]
        except Exception as err:  # try the next mirror
            errors.append(f"{dataset_id}: {type(err).__name__}: {err}"[:300])
    offline = os.environ.get("HF_DATASETS_OFFLINE") == "1" or os.environ.get("HF_HUB_OFFLINE") == "1"
    raise RuntimeError(
        "could not load the MATH dataset from the Hugging Face hub.\n  "
        + "\n  ".join(errors)
        + "\nWhat to do: "
        + (
            "HF_DATASETS_OFFLINE / HF_HUB_OFFLINE is set, so only an already cached copy can "
            "be used. Run once with network access to fill the cache, or "
            if offline
            else "check the network connection, or "
        )
        + "use the shipped stand-in with profile='tiny' (COURSE_PROFILE=tiny)."
    )


def _load_math_tiny(split: str) -> list[dict]:
    name = "train" if _SPLIT_ALIASES[split] == "train" else "val"
    path = DATA_DIR / f"math_tiny_{name}.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [_record(json.loads(line)) for line in handle if line.strip()]


MATH_SOURCE_VARIABLE = "COURSE_MATH_SOURCE"

#: Where MATH comes from and on what terms. Hendrycks et al. release MATH under the MIT licence
#: (https://github.com/hendrycks/math; the hub mirrors in MATH_HUB_SOURCES carry the same tag).
#: Its problems are taken from mathematics competitions (AMC 10, AMC 12, AIME and others), and
#: the course asks students, as the assignment it adapts does, to use the set for this
#: assignment only and not to redistribute it.
MATH_NOTE = (
    "MATH (Hendrycks et al. 2021, arXiv:2103.03874): 12,500 competition problems (AMC 10, AMC 12, AIME, ...) "
    "with worked solutions, released by its authors under the MIT licence (github.com/hendrycks/math). "
    "Use it for this assignment only and do not redistribute it (your submission needs none of it)."
)
#: The tiny profile's stand-in: synthetic problems written by the kit, not taken from MATH.
TINY_MATH_NOTE = (
    "tiny-MATH: synthetic arithmetic written from templates by the course kit (sums, differences, products, "
    "fractions with one denominator, one-step equations); it holds no MATH problem and ships with the kit."
)


def data_note(profile: str) -> str:
    """One line on where ``load_math(..., profile)`` takes its problems from and on what terms."""
    if profile == "tiny":
        return TINY_MATH_NOTE
    source = os.environ.get(MATH_SOURCE_VARIABLE)
    where = f"read from {source}" if source else f"from the Hugging Face hub ({MATH_HUB_SOURCES[0][0]} or a mirror)"
    return f"{MATH_NOTE} Loaded {where}."


def _load_math_local(folder: str, split: str) -> list[dict]:
    """``train.jsonl`` or ``test.jsonl`` from a local folder (a course mirror of MATH, or an
    offline GPU machine): one JSON object per line with ``problem`` and ``solution``."""
    name = "train" if _SPLIT_ALIASES[split] == "train" else "test"
    path = Path(folder) / f"{name}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{MATH_SOURCE_VARIABLE}={folder} has no {name}.jsonl: put MATH's {name} split there "
                                "as JSON lines with 'problem' and 'solution', or unset the variable")
    with path.open(encoding="utf-8") as handle:
        return [_record(json.loads(line)) for line in handle if line.strip()]


def load_math(split: str, profile: str, limit: int | None = None) -> list[dict]:
    """MATH examples as dicts with ``problem``, ``solution``, ``answer`` (plus ``level``,
    ``type``).

    Args:
        split: ``"train"``, or ``"validation"`` / ``"test"`` (both are MATH's 5 000-problem
            test set; the tiny profile has one held-out file for them).
        profile: ``"full"`` downloads MATH with ``datasets`` (mirrors in
            ``MATH_HUB_SOURCES``), or reads ``$COURSE_MATH_SOURCE/{train,test}.jsonl`` when that
            variable names a local folder; ``"tiny"`` reads
            ``helpers/data/math_tiny_{train,val}.jsonl``, short synthetic arithmetic a
            ~1M-parameter model can learn.
        limit: keep only the first ``limit`` examples.

    Licence: MATH is released by its authors under the MIT licence; its problems come from
    mathematics competitions, and the course uses it for this assignment only (``MATH_NOTE``).
    The tiny files are synthetic, generated by the kit's ``tools/make_math_tiny.py``, and hold no
    MATH problem (``TINY_MATH_NOTE``). ``data_note(profile)`` returns the line that applies.
    """
    if split not in _SPLIT_ALIASES:
        raise ValueError(f"unknown split {split!r}; use one of {sorted(_SPLIT_ALIASES)}")
    if profile == "tiny":
        records = _load_math_tiny(split)
    elif profile == "full" and os.environ.get(MATH_SOURCE_VARIABLE):
        records = _load_math_local(os.environ[MATH_SOURCE_VARIABLE], split)
    elif profile == "full":
        records = _load_math_from_hub(split)
    else:
        raise ValueError(f"unknown profile {profile!r}; use 'tiny' or 'full'")
    return records if limit is None else records[:limit]
