"""Suite ``stoichiometry``: ChemAlgebra (Valenti, Bacciu, Vergari et al., 2022).

Reaction prediction as algebraic reasoning: predict the bag of products *with* their
stoichiometric coefficients. The suite classifies and re-balances reactions against a
configurable by-product library (:mod:`.balance`), builds the eight ChemAlgebra datasets and
the USPTO-T1/T2 probes (:mod:`.variants`), scores predictions with the paper's multilabel
and mass-balance metrics (:mod:`.metrics`, :mod:`.scoring`), and ships two reference baselines
as bag-predictor model kinds (:mod:`.baselines`, algebra in :mod:`.algebra`). The Python API is
:mod:`.api` (``chemassay.stoichiometry``); the CLI (:mod:`.cli`) and the demo call it.
"""
