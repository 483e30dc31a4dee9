"""Figure 1 (Section 3.1, Appendix A.1): specialized first-layer neurons, one module per question
of page 03, on one configuration class and one training path.

=========== ===================================================================================
module      question
=========== ===================================================================================
``base``    the configuration (:class:`~.base.Reading`: a reading of A.1's unstated choices and
            the sizes it trains at), the named readings, the one training path
            (:func:`~.base.train_figure1`) and the Figure 1 table it yields
``table``   the live table beside the paper's and its verdict, the page's closing numbers and cost
``lazy``    is it feature learning? the lazy-regime and small-initialization ablations (live)
``readings`` which reading matches the paper's table, and the table at the paper's scale (cells)
``study``   what moves the table: the sensitivity study (cells)
=========== ===================================================================================

A question too large for one module is split by seam beside it, and its module re-exports the
parts: ``readings_analysis`` (tables), ``readings_words`` (answers and the page's words) and
``readings_figures`` (the drawn neurons); ``study_settings`` (the study's settings),
``study_analysis`` (tables and each factor's effect), ``study_figures`` (the map) and
``study_words`` (the sentences about the hypotheses).

Importing the package imports every module, so that the methods, figures (``fig1``,
``figure1-readings``, ``figure1-study``), export rows, plots and page cost they register are known
(:func:`monosem.experiments.registry.discover`).
"""

from . import base, lazy, readings, study, table
from .base import FIGURE1_READING, READINGS, STUDY_READINGS, Reading, train_figure1

__all__ = ["base", "table", "lazy", "readings", "study", "Reading", "READINGS", "FIGURE1_READING", "STUDY_READINGS", "train_figure1"]
