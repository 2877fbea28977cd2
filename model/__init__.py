"""The pure model of the Delta log: the oracle every other part is checked against.

Deliberately naive and line-for-line with the rule IDs of ``spec/``: no I/O, no
clocks (time is passed in), no performance tricks.
"""
