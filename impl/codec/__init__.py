"""The JSON codec of the Delta log, one module per format, byte-compatible with delta-spark.

- :mod:`.commit`: commit files, one JSON action per line (ACTION.LINE_FORMAT).
- :mod:`.actions`: each action as a JSON object, one field table per action driving both
  :func:`decode_action` and :func:`encode_action` (the machinery is in :mod:`.fields`).
- :mod:`.paths`: ``add.path`` as a URI reference, Hive partition directories (ACTION.ADD).
- :mod:`.partition_values`: the ``partitionValues`` string of each typed value
  (ACTION.PARTITION_VALUES).
- :mod:`.stats`: the ``stats`` JSON string of an add.
- :mod:`.z85`: Z85, in which deletion-vector ids and inline deletion vectors are written.
- :mod:`.json_text` and :mod:`.java_text`: JSON text as Jackson writes it, numbers and datetimes
  as Java prints them.

Reading validates known actions field by field (a malformed one is a
:class:`~deltaspec.impl.errors.CorruptLogError` located by table, version, file and line) and
ignores unknown actions and fields (ACTION.UNKNOWN). Writing produces the bytes delta-spark writes
for the same actions: its field names and order, absent fields omitted, compact JSON.
"""

from .actions import (
    COMMIT_INFO_FIELD_ORDER,
    KNOWN_ACTIONS,
    decode_action,
    encode_action,
    make_commit_info,
    misplaced_feature_lists,
)
from .commit import commit_bytes, decode_commit, encode_commit
from .partition_values import decode_partition_value, encode_partition_value
from .paths import (
    HIVE_DEFAULT_PARTITION,
    decode_path,
    encode_path,
    partition_directory,
)
from .stats import encode_stats

__all__ = [
    "COMMIT_INFO_FIELD_ORDER",
    "HIVE_DEFAULT_PARTITION",
    "KNOWN_ACTIONS",
    "commit_bytes",
    "decode_action",
    "decode_commit",
    "decode_partition_value",
    "decode_path",
    "encode_action",
    "encode_commit",
    "encode_partition_value",
    "encode_path",
    "encode_stats",
    "make_commit_info",
    "misplaced_feature_lists",
    "partition_directory",
]
