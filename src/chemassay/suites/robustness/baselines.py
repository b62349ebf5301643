"""The robustness suite's built-in models, as kinds of the one model registry.

Encoders (protocol ``encoder``), the two bounds of the retrieval task:

* ``fingerprint[:radius=2,bits=2048,chirality=1]`` — Morgan count fingerprints (invariant);
* ``char-ngram[:n=1-3,dim=4096]`` — hashed character n-gram counts (string-based).

Property predictors (protocol ``property-predictor``), the downstream baselines: a
scikit-learn random forest on either encoding, trained on the training split the calling
command supplies (``downstream``), or on the bundled solubility training set (logS) when
none is given (so ``check_model("rf-fingerprint", "property-predictor")`` works alone):

* ``rf-fingerprint[:trees=200,seed=0]``;
* ``rf-char-ngram[:trees=200,seed=0]``.

``hf:PATH``, ``openai:MODEL,base_url=...``, ``python:...`` and ``predictions:FILE`` come
from the general kinds (``chemassay models list``). This module only declares kinds; the
factories import their libraries when a model is loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chemassay.models.registry import ModelKind
from chemassay.models.spec import check_options, option_int
from chemassay.suites.robustness.downstream import ForestPropertyModel

SUITE = "robustness"

FOREST_OPTIONS = {
    "trees": "number of trees (default 200; the downstream command's --n-estimators)",
    "seed": "random seed of the forest (default: the command's --seed, else 0)",
    "n_jobs": "worker processes for training and prediction (default 1)",
}

MODEL_KINDS: list[ModelKind] = [
    ModelKind(
        name="fingerprint", protocols=("encoder",),
        factory="chemassay.suites.robustness.encoders:create_fingerprint",
        description="Morgan count fingerprint (graph-based: invariant to every SMILES rewrite; AMORE's upper bound)",
        options={"radius": "Morgan radius (default 2)", "bits": "folded size, a multiple of 64 (default 2048)",
                 "chirality": "include chirality (default true)"},
        suite=SUITE, example="fingerprint:radius=3,bits=4096",
    ),
    ModelKind(
        name="char-ngram", protocols=("encoder",),
        factory="chemassay.suites.robustness.encoders:create_char_ngram",
        description="hashed character n-gram counts of the SMILES text (string-based: AMORE's lower bound)",
        options={"n": "n-gram lengths, e.g. 1-3 (default) or 2", "dim": "hashed size (default 4096)"},
        suite=SUITE, example="char-ngram:n=2-4,dim=8192",
    ),
    ModelKind(
        name="rxnmapper", protocols=("encoder",),
        factory="chemassay.models.pretrained:create_rxnmapper",
        description="the pretrained ALBERT inside the rxnmapper wheel (MLM on 1.3 M USPTO reactions), mean of every position",
        arg="DIR", options={"batch_size": "strings per forward pass (default 32; padding is masked)",
                            "device": "cpu, cuda or auto"},
        suite=SUITE, extra="pretrained", example="rxnmapper",
    ),
    ModelKind(
        name="rxnfp", protocols=("encoder",),
        factory="chemassay.models.pretrained:create_rxnfp",
        description="a pretrained BERT inside the rxnfp wheel (USPTO reactions), mean of every position",
        arg="DIR", options={"model": "bert_pretrained (MLM, default) or bert_ft (fine-tuned on reaction classes)",
                            "batch_size": "strings per forward pass (default 32)", "device": "cpu, cuda or auto"},
        suite=SUITE, extra="pretrained", example="rxnfp:model=bert_ft",
    ),
    ModelKind(
        name="chemnet", protocols=("encoder",),
        factory="chemassay.models.pretrained:create_chemnet",
        description="ChemNet of the Frechet ChemNet Distance (fcd_torch wheel): its penultimate layer, conv/LSTM layers with --layers all",
        arg="WEIGHTS", options={"canonize": "canonicalize with RDKit first, as FCD does (default false: probe the string)",
                                "batch_size": "strings per forward pass (default 256)", "device": "cpu, cuda or auto"},
        suite=SUITE, extra="torch", example="chemnet:canonize=true",
    ),
    ModelKind(
        name="gnn", protocols=("encoder", "property-predictor"),
        factory="chemassay.models.gnn:create_gnn",
        description="a graph neural network trained here (train-gnn): mean-pooled atom states, invariant by construction",
        arg="DIR", arg_required=True,
        options={"batch_size": "molecules per batch (default 256)", "device": "cpu, cuda or auto"},
        suite=SUITE, extra="train", example="gnn:gnn-logS",
    ),
    ModelKind(
        name="hf-finetune", protocols=("property-predictor",),
        factory="chemassay.suites.robustness.finetune:create_finetuned",
        description="a Hugging Face SMILES model fine-tuned here on the downstream training split (mean-pooled head)",
        arg="DIR", arg_required=True,
        options={"epochs": "passes of steps_per_epoch steps (default 20)", "steps_per_epoch": "default 32",
                 "lr": "learning rate (default 1e-4)", "batch_size": "default 32", "seed": "default: --seed",
                 "device": "cpu, cuda or auto", "threads": "CPU threads for torch"},
        suite=SUITE, extra="train", example="hf-finetune:lm-encoder,epochs=20",
    ),
    ModelKind(
        name="rf-fingerprint", protocols=("property-predictor",),
        factory="chemassay.suites.robustness.baselines:create_forest",
        description="random forest on Morgan count fingerprints (invariant property model; downstream baseline)",
        options=FOREST_OPTIONS, suite=SUITE, example="rf-fingerprint:trees=100",
    ),
    ModelKind(
        name="rf-char-ngram", protocols=("property-predictor",),
        factory="chemassay.suites.robustness.baselines:create_forest",
        description="random forest on character n-gram counts (string-based property model; downstream baseline)",
        options=FOREST_OPTIONS, suite=SUITE, example="rf-char-ngram:trees=100",
    ),
]
"""The kinds this suite adds to the registry."""


def create_forest(spec, protocol: str, context: dict[str, Any]):
    """Factory of ``rf-fingerprint`` / ``rf-char-ngram``: a fitted random forest.

    ``context`` may give the training data (``train_smiles``, ``train_targets`` as an
    ``(n, targets)`` array, ``task`` ``regression``/``classification``) and defaults for the
    options (``n_estimators``, ``seed``, ``n_jobs``); without training data the forest is
    fitted on the bundled solubility training split (target logS).
    """
    check_options(spec, set(FOREST_OPTIONS))
    features = "fingerprint" if spec.kind == "rf-fingerprint" else "char-ngram"
    trees = option_int(spec, "trees", int(context.get("n_estimators", 200)), minimum=1)
    seed = option_int(spec, "seed", int(context.get("seed", 0)))
    n_jobs = option_int(spec, "n_jobs", int(context.get("n_jobs", 1)))
    if context.get("train_smiles") is not None:
        smiles = list(context["train_smiles"])
        targets = np.asarray(context["train_targets"])
        task = context.get("task", "regression")
        trained_on = context.get("trained_on", "the command's training split")
    else:
        from chemassay.data.registry import load_dataset

        train = load_dataset("solubility-huuskonen", part="train")
        smiles = train.smiles
        targets = np.asarray([[float(v)] for v in train.columns["logS"]])
        task = "regression"
        trained_on = "solubility-huuskonen/train (logS)"
    targets = targets[:, None] if targets.ndim == 1 else targets
    model = ForestPropertyModel(features, task, seed=seed, n_estimators=trees, n_jobs=n_jobs)
    model.trained_on = trained_on
    return model.fit(smiles, targets)
