"""Traffic profiles: how load is offered and judged, over any generator's run_trial."""
