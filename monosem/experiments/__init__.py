"""Experiments: every figure as a declared sweep, its runner and its result cache."""
