"""Suite ``stoichiometry``: ChemAlgebra (Valenti, Bacciu, Vergari et al., 2022).

Reaction prediction as algebraic reasoning: predict the bag of products *with* their
stoichiometric coefficients. The suite classifies and re-balances reactions against a
configurable by-product library (:mod:`.balance`), builds the eight ChemAlgebra datasets and
the USPTO-T1/T2 probes (:mod:`.variants`), scores predictions with the paper's multilabel
and mass-balance metrics (:mod:`.metrics`), and ships two reference baselines
(:mod:`.baselines`).
"""
