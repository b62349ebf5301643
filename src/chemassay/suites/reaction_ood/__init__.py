"""Suite ``reaction-ood``: out-of-distribution splits and evaluation for reaction predictors
(Bradshaw et al., "Challenging reaction prediction models to generalize to novel chemistry")."""
