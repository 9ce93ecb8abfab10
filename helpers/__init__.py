"""Scaffolding shared by the course notebooks.

Nothing in this package answers a TODO: student work lives in the notebooks, reference
answers only in ``solutions/``.
"""
