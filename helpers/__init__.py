"""Scaffolding shared by the course notebooks.

Nothing in this package answers a TODO: student work lives in the notebooks, reference
answers only in ``solutions/``.
"""

__version__ = "0.1.0"
"""Version of the kit and of the student wheel (``course-kit-helpers``); release notebooks'
install cells ask for exactly this version."""
