"""Fixtures for tests and benchmarks: small, exactly known scenes and manifests. Not imported by the pipeline."""
