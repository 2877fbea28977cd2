"""The engines under test, one folder each (``impl``, ``model``, ``deltars``, ``spark``,
``deltaspark``, ``cmd``: its adapter, its table reader, its operations), over the shared pieces
(``table_files``: a table's setup written as files; ``operations``: writers as table operations;
``spark_api``: the Spark API two engines share) and the harness; ``registry`` names them
(``--adapter NAME``). The only place allowed to import both model and impl."""
