"""Re.search: text around the template still scores 1."""
KIND = "wrong"
EXPECTED = {"test_format_reward": 0}
PATCHES = [
    ('format_reward',
     'template.fullmatch(text.strip())',
     'template.search(text.strip())'),
]
