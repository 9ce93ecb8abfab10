"""Surrounding whitespace is not stripped before matching."""
KIND = "wrong"
EXPECTED = {"test_format_reward": 0}
PATCHES = [
    ('format_reward',
     'template.fullmatch(text.strip())',
     'template.fullmatch(text)'),
]
