"""The SQL both database backends share: each port verb written once, over a dialect (``dialect.py``).

``port.py`` (the transaction port), ``read_port.py`` (a Load's snapshot reads and the page reads)
hold the verbs; each backend names its dialect (its placeholders, its few SQL spots, whether a
list is one array parameter) and the connection the verbs run on.
"""
