"""``cmd:PROGRAM``: any implementation behind the JSON-lines bridge protocol, as adapter and
reader."""
