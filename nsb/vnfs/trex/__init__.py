"""Cisco TRex (stateless) as nsb's traffic generator: its install, its config, its
server process, the streams of a trial and the plugin that drives them."""
