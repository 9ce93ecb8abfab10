"""Lets spaces or tabs sit between a tag and its newline: the template asks for the tag and a newline (rule 2)."""
KIND = "wrong"
EXPECTED = {"test_format_reward": 0}
PATCHES = [
    ('format_reward',
     'template = re.compile(rf"<think>\\n{body}\\n</think>\\n<answer>\\n{body}\\n</answer>")',
     'template = re.compile(rf"<think>[ \\t]*\\n{body}\\n</think>[ \\t]*\\n<answer>[ \\t]*\\n{body}\\n</answer>")'),
]
