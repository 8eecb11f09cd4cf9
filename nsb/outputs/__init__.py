"""Outputs: where events go (results file, InfluxDB, ...)."""
