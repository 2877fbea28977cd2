"""What a table declares: its properties, protocol features, the release it follows and its paths."""
