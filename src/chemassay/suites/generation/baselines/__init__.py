"""The non-neural MOSES baselines as model kinds: character n-gram LM and combinatorial BRICS.

Both are *generators* (``sample(n, seed)``) in the one model registry, named by a spec:

``ngram[:MODEL_PATH][,train=SET][,limit=N][,context_len=10][,max_len=100]``
    the MOSES character n-gram model (:mod:`.ngram`);
``combinatorial[:MODEL_PATH][,train=SET][,limit=N][,join=valid|moses]``
    the MOSES combinatorial BRICS-fragment generator (:mod:`.combinatorial`).

``MODEL_PATH`` is a model file written by ``chemassay generation train`` (or
:func:`chemassay.generation.train`); it is used as it is. When the file does not exist and
``train=SET`` is given, the model is trained on ``SET`` first and saved there ("train on
first use"); without ``train=`` a missing file is an error. Without ``MODEL_PATH`` the model
trained on ``train`` (default ``moses``, the MOSES training split; ``limit``: its first N
molecules) is kept in chemassay's checked cache and trained once. ``SET`` is ``moses``,
``moses:PART`` or a SMILES file. ``context_len`` is a training setting of the n-gram model;
``max_len`` (n-gram) and ``join`` (combinatorial) are sampling settings.

This module only declares the kinds (``MODEL_KINDS``); the code is imported when a model is
loaded. The MOSES HMM baseline is not provided: see ``docs/generation.md`` ("Why no HMM").
"""

from __future__ import annotations

from chemassay.models.registry import ModelKind

_TRAINING_OPTIONS = {
    "train": "training set when the model must be trained: moses, moses:PART or a SMILES file (default moses)",
    "limit": "train on the first N molecules only",
}

_SAMPLING_OPTIONS = {
    "max_len": "stop a sample after max_len characters (default 100)",
    "temperature": "softmax temperature (default 1; LatentGAN 0: greedy decoding, as the reference)",
    "batch": "molecules sampled at once (default 512; HMM 4096); the same n, seed and batch give the same samples",
    "device": "cpu (default) or cuda",
}

MODEL_KINDS = [
    ModelKind(
        name="ngram", protocols=("generator",),
        factory="chemassay.suites.generation.baselines.kinds:create_ngram",
        description="MOSES character n-gram language model (back-off, smoothing 0.01), trained here",
        arg="MODEL_PATH", arg_required=False,
        options={**_TRAINING_OPTIONS,
                 "context_len": "longest context when training (MOSES: 10, i.e. up to 11-grams)",
                 "max_len": "stop a sample after max_len - 1 characters (MOSES: 100)"},
        suite="generation",
        example="ngram:models/ngram.npz,train=moses",
    ),
    *[
        ModelKind(
            name=kind, protocols=("generator",),
            factory="chemassay.suites.generation.baselines.learned:create",
            description=description, arg="DIR", arg_required=True,
            options=_SAMPLING_OPTIONS if kind != "hmm" else {k: v for k, v in _SAMPLING_OPTIONS.items()
                                                            if k in ("max_len", "batch")},
            extra="hmm" if kind == "hmm" else "train", suite="generation",
            example=f"{kind}:models/{kind}-cpu-s0,max_len=100",
        )
        for kind, description in (
            ("charrnn", "MOSES CharRNN: character-level LSTM language model, trained here"),
            ("vae", "MOSES VAE: SMILES variational autoencoder (GRU encoder and decoder), trained here"),
            ("aae", "MOSES AAE: SMILES adversarial autoencoder (LSTM encoder/decoder, latent discriminator), trained here"),
            ("latentgan", "MOSES LatentGAN: SMILES heteroencoder plus a WGAN-GP on its codes, trained here"),
            ("hmm", "MOSES HMM: 200-state categorical hidden Markov model over SMILES characters (hmmlearn), trained here"),
        )
    ],
    ModelKind(
        name="combinatorial", protocols=("generator",),
        factory="chemassay.suites.generation.baselines.kinds:create_combinatorial",
        description="MOSES combinatorial generator: random joins of BRICS fragments of the training set",
        arg="MODEL_PATH", arg_required=False,
        options={**_TRAINING_OPTIONS,
                 "join": "valid (join only where the result is a valid molecule, default) or moses (reference)"},
        suite="generation",
        example="combinatorial:models/combinatorial.json.gz,train=moses",
    ),
]

_LAZY = {
    "CharNGram": ("chemassay.suites.generation.baselines.ngram", "CharNGram"),
    "CombinatorialGenerator": ("chemassay.suites.generation.baselines.combinatorial", "CombinatorialGenerator"),
    "BaselineGenerator": ("chemassay.suites.generation.baselines.kinds", "BaselineGenerator"),
}

__all__ = ["MODEL_KINDS", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
