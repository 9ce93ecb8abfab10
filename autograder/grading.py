"""The grader's public API in one import (kept for scripts and notebooks written against it).

The work lives in one module per part of the design:

- ``sandbox``: OS-level isolation of one kernel (namespaces, own uid, allowlisted filesystem);
- ``kernel_guard`` / ``nbgrader_ext``: the sealed in-kernel guard and the executor that checks it;
- ``intake``: a student's upload brought into shape (archives, relocations, special files);
- ``grade``: one submission, start to finish (``grade_one``);
- ``batch``: the batch on local workers (``autograde``); ``remote``: the same on Ray;
- ``evaluators``: grader-side measurements (grpo_format's held-out adherence);
- ``scrub``: hidden tests and reference answers kept out of everything a student gets;
- ``exports``: feedback pages, result.json, Gradescope, grades.csv, the LMS file;
- ``manual``: formgrader on OUT and ``python -m autograder grades OUT``.
"""
from __future__ import annotations

from .batch import autograde, detect_gpus, parse_deadline, resolve_profile
from .course import prepare_template
from .exports import format_table, gradescope_json, write_grades
from .grade import grade_one, kernel_env
from .intake import check_artifacts, discover, submission_time
from .results import STATUSES, Result, Settings, SubmissionLayoutError
from .scrub import sanitize_autograded

__all__ = ["autograde", "detect_gpus", "parse_deadline", "resolve_profile", "prepare_template", "format_table",
           "gradescope_json", "write_grades", "grade_one", "kernel_env", "check_artifacts", "discover",
           "submission_time", "STATUSES", "Result", "Settings", "SubmissionLayoutError", "sanitize_autograded"]
