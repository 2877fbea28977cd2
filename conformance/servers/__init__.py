"""Object-store servers on loopback for the tests and the main job: an S3-compatible server
(moto's server mode, which honours conditional writes) and Azurite (Azure Blob Storage), each a
real OS process started on a free port and stopped with its context (:func:`serving`)."""
