"""Benchmarks of claw-sessiond against what users would pick instead (run ``bench/run``)."""
