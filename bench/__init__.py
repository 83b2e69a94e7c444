"""Benchmarks that print figures; run them by hand, they are never timed assertions in tests."""
