"""python -m autograder stats OUT (issue 41): per-cell pass rates, a cell made wrong on purpose flagged, failure
messages grouped, a page that opens offline."""
from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict
from pathlib import Path

from autograder.__main__ import main
from autograder.outcome import Result


def write_results(out: Path, count: int = 12) -> None:
    """``count`` submissions: most pass test_a and test_b; test_wrong (a wrong hidden test) fails nearly everyone,
    strong submissions included; a third of them fail test_b with one of two messages."""
    for i in range(count):
        cells = {"test_a": [2.0, 2.0], "test_b": [0.0 if i % 3 == 0 else 3.0, 3.0],
                 "test_wrong": [1.0 if i == 0 else 0.0, 1.0]}
        messages = {"test_wrong": "TODO 3, a case: got 1, expected 2"}
        if i % 3 == 0:
            messages["test_b"] = "TODO 2: raised NotImplementedError" if i % 2 else "TODO 2: got 0.5, expected 1"
        score = sum(c[0] for c in cells.values())
        result = Result(f"s{i:02d}", "toy", score=score, max_score=6.0, cells=cells, cell_messages=messages,
                        seconds=10.0 + i, status="ok" if score == 6 else "failed-tests", late=i == 5)
        folder = out / "feedback" / result.student / "toy"
        folder.mkdir(parents=True)
        (folder / "result.json").write_text(json.dumps(asdict(result)))


def test_a_wrong_test_is_flagged_and_messages_are_grouped(tmp_path, capsys):
    out = tmp_path / "OUT"
    write_results(out)
    (out / "gradebook.db").write_bytes(b"")
    assert main(["stats", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "check these tests: test_wrong" in printed
    rows = {row["cell"]: row for row in csv.DictReader(open(out / "stats" / "toy" / "stats.csv"))}
    assert list(rows) == ["test_a", "test_b", "test_wrong"]
    assert rows["test_wrong"]["flagged"] == "1" and rows["test_a"]["flagged"] == "0"
    assert rows["test_b"]["flagged"] == "0" and abs(float(rows["test_b"]["pass_rate"]) - 8 / 12) < 1e-3
    page = (out / "stats" / "toy" / "index.html").read_text()
    assert page.count("<svg") == 4 and "check these tests: test_wrong" in page
    assert "got 0.5, expected 1" in page and "raised NotImplementedError" in page
    assert not re.search(r'(src|href)="https?://', page) and "<script" not in page  # opens offline


def test_stats_on_a_folder_without_grades_says_what_to_run(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nothing")]) == 2
    assert "autograde" in capsys.readouterr().err
