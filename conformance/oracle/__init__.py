"""The differential oracle: a Hypothesis state machine running the model against adapters, the
differential comparison, and the seeded bugs (mutants) that measure what it catches."""
