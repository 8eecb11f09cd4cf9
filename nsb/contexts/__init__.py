"""Contexts: where nodes come from (embedded lab, bare-metal pod, VMs)."""
