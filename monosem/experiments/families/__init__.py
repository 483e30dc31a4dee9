"""The built-in method families, one module each, each registering its methods
(:func:`~monosem.experiments.registry.register_method`): networks (``networks``), kernels and
per-cluster oracles (``kernels``), MLP-gated local predictors (``gated``), mixtures of experts
(``mixtures``) and the Bayes predictor (``bayes``). Their names are constants of these modules,
written nowhere else."""
