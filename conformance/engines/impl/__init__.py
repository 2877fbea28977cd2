"""deltaspec.impl under test: its adapter (``OptimisticTransaction`` on a local store) and its
reader."""
