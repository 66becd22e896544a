"""Benchmarks (not tests): each script prints its figures; docs/performance.md records them."""
