"""Re.match with ^...$ under re.MULTILINE and greedy bodies: a line after </answer> and nested tags still score 1."""
KIND = "wrong"
EXPECTED = {"test_format_reward": 0}
PATCHES = [
    ('format_reward',
     'template.fullmatch(text.strip())',
     ('re.match(r"^<think>\\n[\\s\\S]*\\n</think>\\n<answer>\\n[\\s\\S]*\\n</answer>$", text.strip(), re.MUL'
      'TILINE)')),
]
