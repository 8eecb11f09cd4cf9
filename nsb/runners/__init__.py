"""Runners: how often and how long a scenario's traffic profile runs."""
