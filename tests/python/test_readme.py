# test_readme.py -- the Python example of README.md runs and gives the
# values its comments state.
import os
import re
from fractions import Fraction

import pytest

import bf16emu

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "..", "README.md")


def test_readme_example():
    if not os.path.exists(README):
        pytest.skip("README.md not found beside the tests")
    text = open(README, encoding="utf-8").read()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    names = {}
    exec(compile(code, "README.md", "exec"), names)
    assert int(names["s"][0]) == 0xC0968717
    assert names["o"].shape == (1, 2, 16, 64)
    assert names["d"].shape == (4, 2)
    assert bf16emu.convert(names["s"], "bf16", "f32")[0] == 0xC097
    assert names["t"].result == 0xC097
    assert names["t"].roundings[-1].error_ulps == Fraction(-30953, 65536)
