"""Benchmarks: speed and quality, reported as ratios to baselines run alongside."""
