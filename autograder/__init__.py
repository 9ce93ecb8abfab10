"""Instructor tooling around nbgrader: generate releases, autograde, feedback, the demo."""
