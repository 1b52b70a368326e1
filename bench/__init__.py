"""Benchmarks of chop against public data (run as ``python -m bench.<name>``)."""
