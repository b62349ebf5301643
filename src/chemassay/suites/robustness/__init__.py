"""Suite ``robustness``: AMORE (Ganeeva et al., "Lost in Translation: Chemical Language
Models and the Misunderstanding of Molecule Structures", Findings of EMNLP 2024) —
identity-preserving SMILES augmentations, embedding retrieval between a molecule and its
augmentation, and downstream robustness of property models."""
