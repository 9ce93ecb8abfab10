"""Every LMS identity keeps its own row (issue 41): names that differ only in Unicode normalisation, width or case
are kept apart at collect, and the LMS name and id recorded there travel byte for byte to lms_grades.csv, the Canvas
import and the return ZIP's file names."""
from __future__ import annotations

import csv
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

from autograder.intake.placement import lms_metadata
from autograder.outcome import Result
from autograder.reports.feedback import write_lms_grades

REPO = Path(__file__).resolve().parents[1]
NFC, NFD = unicodedata.normalize("NFC", "josé"), unicodedata.normalize("NFD", "josé")
TWINS = {301: NFC, 302: NFD, 303: "Ｊｏｓｅ", 304: "JOSE", 305: "jose"}


def test_twins_keep_their_own_folder_name_and_row(tmp_path):
    notebook = (REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb").read_bytes()
    with zipfile.ZipFile(tmp_path / "canvas.zip", "w") as archive:
        for uid, login in TWINS.items():
            archive.writestr(f"{login}_{uid}_{uid + 5000}_maxent_irl.ipynb", notebook)
    subs = tmp_path / "subs"
    done = subprocess.run([sys.executable, "-m", "autograder", "collect", str(tmp_path / "canvas.zip"),
                           "--assignment", "maxent_irl", "--out", str(subs)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lms = lms_metadata(subs)  # what autograde reads and keeps in OUT/lms.json
    by_uid = {int(meta["user_id"]): (folder, meta) for folder, meta in lms.items()}
    assert sorted(by_uid) == sorted(TWINS) and len({folder for folder, _ in by_uid.values()}) == len(TWINS)
    for uid, login in TWINS.items():
        folder, meta = by_uid[uid]
        assert meta["name"].encode() == login.encode(), (uid, meta["name"])
        assert meta["by_assignment"]["maxent_irl"]["graded_upload"].encode() == \
            f"{login}_{uid}_{uid + 5000}_maxent_irl.ipynb".encode()
        assert (subs / folder / "maxent_irl" / "maxent_irl.ipynb").is_file()
    results = [Result(folder, "maxent_irl", score=float(uid - 300), max_score=28.0) for uid, (folder, _) in
               by_uid.items()]
    write_lms_grades(results, lms, tmp_path / "lms_grades.csv")
    rows = list(csv.DictReader(open(tmp_path / "lms_grades.csv", encoding="utf-8")))
    assert len(rows) == len(TWINS)
    for row in rows:
        uid = int(row["lms_user_id"])
        assert row["name"].encode() == TWINS[uid].encode() and float(row["points"]) == uid - 300


def test_plain_folder_twins_keep_their_own_folder_and_name(tmp_path):
    notebook = (REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb").read_bytes()
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as archive:
        for login in TWINS.values():
            archive.writestr(f"{login}.ipynb", notebook)
    subs = tmp_path / "subs"
    done = subprocess.run([sys.executable, "-m", "autograder", "collect", str(tmp_path / "plain.zip"),
                           "--assignment", "maxent_irl", "--out", str(subs)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = sorted(meta["name"].encode() for meta in lms_metadata(subs).values())
    assert names == sorted(login.encode() for login in TWINS.values())
    assert len({p.name for p in subs.iterdir() if p.is_dir()}) == len(TWINS)


def test_collect_given_one_notebook_says_how_to_pass_it(tmp_path):
    notebook = tmp_path / "alice.ipynb"
    notebook.write_bytes((REPO / "notebooks" / "maxent_irl" / "maxent_irl.ipynb").read_bytes())
    done = subprocess.run([sys.executable, "-m", "autograder", "collect", str(notebook), "--assignment", "maxent_irl",
                           "--out", str(tmp_path / "subs")], capture_output=True, text=True)
    assert done.returncode == 2 and "it is one notebook, not an LMS download" in done.stderr
    assert not (tmp_path / "subs").exists()
