"""The generators of the spec's generated vectors, each run as ``python -m`` with an optional
output folder: ``log_vectors`` (spec/vectors/) and ``writer_protocols``
(spec/scenarios/txn/writer-protocol/). They read only the spec's own data (through
``deltaspec.releases_table``), so they sit in the chain's bottom layer; the conflict matrix's
vectors are spelled by the workload alphabet (``deltaspec.conformance.workload.matrix_vectors``)."""
