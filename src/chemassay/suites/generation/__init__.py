"""Suite ``generation``: the MOSES benchmark (Polykovskiy et al., "Molecular Sets (MOSES):
A Benchmarking Platform for Molecular Generation Models")."""
