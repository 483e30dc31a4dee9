"""Theorem 2 (Section 4.2, Appendix B.2): the MLP / kernel / RFM sample-complexity separation."""

__all__: list[str] = []
