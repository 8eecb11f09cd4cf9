"""DPDK applications as systems under test, and DPDK telemetry."""
