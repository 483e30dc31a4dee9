"""Theory of Section 4: closed forms, landscapes and population gradient flows.

The Theorem-1 part (Section 4.1, Appendix B.1) lives in :mod:`monosem.theory.theorem1` and the
Theorem-2 part (Section 4.2, Appendix B.2) in :mod:`monosem.theory.theorem2`; both are re-exported
here.
"""

from .theorem1 import *  # noqa: F401,F403
from .theorem1 import __all__ as _all1
from .theorem2 import *  # noqa: F401,F403
from .theorem2 import __all__ as _all2

__all__ = [*_all1, *_all2]  # noqa: PLE0604 (both parts are lists of names)
