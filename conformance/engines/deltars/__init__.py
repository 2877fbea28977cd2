"""delta-rs (the deltalake package) under test: its adapter (writers as operations) and its
reader."""
