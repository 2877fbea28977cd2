"""What a table declares: its properties, protocol features, the release it follows, its paths."""
