"""The questions the pages ask, one module each, on the machinery of :mod:`monosem.experiments`
(typed cells, cache, runner, recorded results, export, cost estimates).

======================== ==================================================================
module                   question (page)
======================== ==================================================================
``feature_learning``     RFM's gain over the Laplace kernel as K grows (01)
``figure1`` (package)    Figure 1: specialized first-layer neurons, one module per question:
                         the live table, the readings, the lazy ablations, the study (03)
``sample_efficiency``    Figures 2 and 6: sample efficiency as K grows (04)
``regime``               the regime map: MLPs against the oracles as n grows (04)
``ladder`` (package)     finding 1b at the paper's scale: the ladder from the long profile's
                         network to the paper's, one module per seam: cells, analysis,
                         figures, words (04)
``init_readings``        finding 1b under each reading of A.2's initialization (04)
``init_analysis``        its tables, verdicts and figure, read from the cells (04)
``init_words``           its page's words (04)
``learned_gates``        Figure 4: MLP-gated local predictors (05)
``gated_metric``         when and why the gated RFM's metric updates hurt at K = 2 (05)
``theorem1_dynamics``    Theorem 1, part II: the dynamics of Lemmas 7-9 (07)
``theorem1_record``      Theorem 1's dynamics as one cell: its record, tables and claims (07)
``theorem2_lemmas``      Theorem 2: its proof checked lemma by lemma (08)
``theorem2_estimators``  Theorem 2: the experiment's four estimators, as cells (08)
``theorem2_separation``  Theorem 2: the separation experiment (08)
``overlap``              overlapping clusters (09)
``rare_regimes``         rare regimes under a Zipf law (09)
``routing_or_features``  the gated pipeline with its routing or features swapped (09)
``experts``              an explicit mixture of experts at matched compute (10)
``drift``                drifting directions (10)
======================== ==================================================================

The machinery never imports a question: a question registers what the machinery needs of it
(its methods, figures, plots, export rows and page costs, :mod:`monosem.experiments.registry`;
a method added to another module's figure, :func:`~monosem.experiments.sweeps.extend_figure`),
and :func:`~monosem.experiments.registry.discover` finds it. So a new method or a new page is one
new module here, and nothing else is edited.
"""
