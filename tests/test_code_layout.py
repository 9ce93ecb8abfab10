"""What tools/code_layout.py says the kit keeps: no import circle, no function over 80 lines or six parameters."""
from __future__ import annotations

import pytest

from tools import code_layout


@pytest.mark.parametrize("package", code_layout.PACKAGES)
def test_no_import_circle(package):
    assert code_layout.cycles(code_layout.import_graph(package)) == []


@pytest.mark.parametrize("package", code_layout.PACKAGES)
def test_no_function_is_longer_than_the_limit(package):
    assert code_layout.long_functions(package) == []


@pytest.mark.parametrize("package", code_layout.PACKAGES)
def test_no_function_takes_more_than_six_parameters(package):
    assert code_layout.many_parameters(package) == []
    assert code_layout.many_parameters(package, limit=5)  # the checker does count


def test_student_facing_keywords_name_what_they_take():
    """The three signatures students call stay within six parameters; a wrong argument is one line that gives the
    whole call (sample_completions still takes its decoding settings by position, as math_grpo's text shows)."""
    from helpers import checkpoint, grpo

    unknown = r"max_new_tokens and optionally temperature, .*: got an unexpected keyword .*'temp'"
    with pytest.raises(TypeError, match=unknown):
        grpo.sample_completions(object(), None, ["p"], 1, 4, temp=0.5)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'max_new_tokens'"):
        grpo.sample_completions(object(), None, ["p"], 1)
    with pytest.raises(checkpoint.CheckpointError, match="takes no rng=; .* rngs=, extra="):
        checkpoint.Checkpointer.save(None, 1, None, rng={})
    with pytest.raises(checkpoint.CheckpointError, match="maybe_save\\(\\) takes no last="):
        checkpoint.Checkpointer.maybe_save(None, 1, None, last=True)


def test_the_checker_finds_a_circle_it_is_shown():
    assert code_layout.cycles({"a": {"b"}, "b": {"a"}, "c": set()})


def test_every_path_the_where_is_x_table_names_exists():
    """docs/ARCHITECTURE.md's look-up table answers from file names; a renamed file must not leave it stale."""
    import re

    text = (code_layout.ROOT / "docs" / "ARCHITECTURE.md").read_text()
    table = text.split("## Where is X", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| Look-up")]
    assert len(rows) >= 15
    missing = []
    tops = ("autograder|helpers|solutions|tests|tools|bench|docs|"
            "authoring|grading|intake|isolation|kernel|reports|evaluators")
    for path in re.findall(rf"`((?:{tops})/[\w./<>-]+?)`", table):
        if "<" in path:
            continue  # a pattern such as solutions/<id>/manifest.json
        candidates = [code_layout.ROOT / path, code_layout.ROOT / "autograder" / path]
        if not any(c.exists() for c in candidates):
            missing.append(path)
    assert not missing, missing
