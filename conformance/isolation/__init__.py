"""The isolation checker: dependency graphs of committed Delta transactions, Elle-style."""
