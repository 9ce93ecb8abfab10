"""Bodies may contain tags, so nested or repeated tags score 1."""
KIND = "wrong"
EXPECTED = {"test_format_reward": 0}
PATCHES = [
    ('format_reward',
     'body = r"(?:(?!</?(?:think|answer)>)[\\s\\S])*"',
     'body = r"[\\s\\S]*?"'),
]
