"""A table as files, for the engines that take their setup that way: setup commits written through
the impl's codec (``impl_actions``, ``datafiles``), the log's files read and trimmed
(``logfiles``)."""
