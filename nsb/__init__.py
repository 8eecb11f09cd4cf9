"""nsb: Network Services Benchmarking."""

__version__ = "0.1.0"
