"""DUTs nsb does not build itself: Linux forwarding (``RouterVNF``), a DUT it only
sends through (``AgnosticVnf``), and any program given as an argument list
(``command``)."""
