"""Theorem 1 (Section 4.1, Appendix B.1): specialization under population gradient flow."""

__all__: list[str] = []
