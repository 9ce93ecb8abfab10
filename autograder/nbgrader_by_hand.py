"""nbgrader configuration for running nbgrader by hand from the repository root.

    cd <repo> && nbgrader generate_assignment maxent_irl --NbGrader.config_file=autograder/nbgrader_by_hand.py

(``--config`` is not an nbgrader option: it is silently ignored.)

`python -m autograder` writes an equivalent config into each throwaway course it grades in,
so the repository itself never collects a gradebook or submissions.
"""
from pathlib import Path

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.root = str(Path(__file__).resolve().parents[1])
c.CourseDirectory.course_id = "course-kit"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
# the grader's own files beside each solution: never copied into a release
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "tests", "variants",
                            "manifest.json"]
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearHiddenTests.begin_test_delimeter = "BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "END HIDDEN TESTS"
