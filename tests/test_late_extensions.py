"""--extensions (issue 41): a student's own deadline, or a waived penalty; bad rows stop with one line."""
from __future__ import annotations

import pytest

from autograder.grading.late import WAIVED, read_extensions, with_extension


def test_a_file_of_extensions_is_read_and_bad_rows_are_named(tmp_path):
    good = tmp_path / "ext.csv"
    good.write_text("student,deadline\nfrank,2026-11-22T12:00\nzoe,Waived\n")
    assert read_extensions(good) == {"frank": "2026-11-22T12:00", "zoe": WAIVED}
    for text, says in (("name,when\nfrank,2026-11-22\n", "line 2: needs the columns student,deadline"),
                       ("student,deadline\nfrank,next tuesday\n", "line 2: 'next tuesday' is neither")):
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(ValueError, match=says):
            read_extensions(bad)
    with pytest.raises(ValueError, match="No such file"):
        read_extensions(tmp_path / "missing.csv")


def test_an_extension_decides_lateness_from_the_submission_time_or_a_clear_upload_time():
    assert with_extension(True, "", WAIVED) == (False, "late penalty waived for you (an approved extension)")
    assert with_extension(True, "2026-11-21T09:00:00Z", "2026-11-22T12:00:00Z")[0] is False
    assert with_extension(False, "2026-11-23T09:00:00Z", "2026-11-22T12:00:00Z")[0] is True
    assert with_extension(True, "", "2026-11-22T12:00:00Z", upload_time="2026-11-21T09:00:00")[0] is False
    late, line = with_extension(True, "", "2026-11-22T12:00:00Z", upload_time="2026-11-22T09:00:00")
    assert late is True and "could not be checked" in line  # 3 hours apart: the zone could decide it
    assert with_extension(True, "", None) == (True, None)
