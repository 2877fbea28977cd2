"""The JSON-lines bridge (spec/bridge.md): ``cmd:`` adapters, the reference bridge program, and
example bridges written from spec/ alone."""
