"""Log replay: checkpoints read into a state, commits reconciled onto it (SNAPSHOT.REPLAY)."""
