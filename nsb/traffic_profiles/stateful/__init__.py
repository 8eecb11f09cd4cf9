"""Stateful traffic profiles: connections per second, concurrent sessions and stateful
throughput, judged by the connections a trial intended, established and lost
(nsb.sessions), through any generator that sends stateful trials."""
