"""Human-facing views of results: summary tables (terminal) and reports."""
