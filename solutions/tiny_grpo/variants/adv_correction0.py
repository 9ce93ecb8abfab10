"""Torch std with correction=0."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('advantages',
     'grouped.std(dim=1, keepdim=True)',
     'grouped.std(dim=1, keepdim=True, correction=0)'),
]
