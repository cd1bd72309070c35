"""Benchmarks: ``python -m benchmarks`` (``make bench``) runs every case and rewrites RESULTS.md."""
