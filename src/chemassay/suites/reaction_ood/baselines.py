"""The reaction-ood suite's built-in models, registered as model kinds.

``template-knn:MODEL.npz``
    The template-based k-nearest-neighbour reaction predictor
    (:mod:`~chemassay.suites.reaction_ood.template_knn`), trained with
    ``chemassay reaction-ood train``. ``template-knn:per-split`` is the built-in baseline of
    ``chemassay assay``: each task trains it on its split's training part (cached).

Any other reaction predictor comes through the general kinds: ``openai:MODEL,base_url=URL``
(a chat model asked for k ranked products), ``hf:PATH`` (a local seq2seq checkpoint, beam
search), ``python:MODULE:CALLABLE`` (an object with ``predict(reactants, k)`` or a function
``f(reactants, k)``) and ``predictions:FILE`` (a file of ranked predictions keyed by reactants).
This module only declares the kinds; the model code is imported when a model is loaded.
"""

from __future__ import annotations

from chemassay.models.registry import ModelKind

MODEL_KINDS = [
    ModelKind(
        name="template-knn",
        protocols=("reaction-predictor",),
        factory="chemassay.suites.reaction_ood.template_knn:create_template_knn",
        description=("template-based kNN forward predictor (RetroSim-style, radius-1 templates of the 50 most "
                     "similar training reactions); train it with 'chemassay reaction-ood train'"),
        arg="MODEL.npz",
        arg_required=True,
        options={"n_jobs": "worker processes for prediction (default: the command's --n-jobs, else 1)"},
        suite="reaction-ood",
        example="template-knn:document.npz,n_jobs=2",
    ),
]
"""The model kinds this suite adds to the registry."""
