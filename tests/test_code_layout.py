"""What tools/code_layout.py says the kit keeps: no import circle, no function over 80 lines."""
from __future__ import annotations

import pytest

from tools import code_layout


@pytest.mark.parametrize("package", code_layout.PACKAGES)
def test_no_import_circle(package):
    assert code_layout.cycles(code_layout.import_graph(package)) == []


def test_no_function_in_the_grader_is_longer_than_the_limit():
    assert code_layout.long_functions("autograder") == []


def test_the_checker_finds_a_circle_it_is_shown():
    assert code_layout.cycles({"a": {"b"}, "b": {"a"}, "c": set()})
