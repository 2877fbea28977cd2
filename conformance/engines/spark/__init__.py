"""deltaspec's Spark path under test: its adapter (writers as DataFrame operations) and its Spark
API."""
