"""A neutral harness: runs scenario vectors and fixtures against any adapter."""
