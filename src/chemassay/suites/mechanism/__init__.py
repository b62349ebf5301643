"""The ``mechanism`` suite: oMeBench (Xu et al., 2025) datasets, the oMeS scorer, LLM
runners and offline baselines for multi-step organic mechanism reasoning."""
