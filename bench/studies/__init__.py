"""Finished studies: each compared alternatives (or asked one question) to make a decision that
is now taken and published in docs/. They stay runnable (``python -m bench.studies.<name>``) to
reproduce their published numbers or to measure again when the decision is revisited; the
product's regular measurements are the modules one folder up. A study may import a benchmark,
never the reverse (bench/tests/test_readme.py)."""
