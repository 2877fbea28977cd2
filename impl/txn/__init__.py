"""Optimistic transactions: preparing a commit, conflict checks against winners, and retries."""
