"""The InfluxDB output and what it is made of: the names of the schema (``names``),
events as points (``points``), settings from nsb.conf and the task (``settings``),
the HTTP client (``client``), the background writer (``writer``), the spool of
points InfluxDB did not take (``spool``) and ``nsb results push`` (``push``)."""
