"""A learned mechanism predictor trained here: the shared sequence-to-sequence model
(:mod:`chemassay.models.seq2seq`, a BART encoder–decoder with its own vocabulary) mapping a
reaction to its step sequence, trained on template expansions (the silver set of
``chemassay mechanism expand``), as the paper fine-tunes LLMs on oMe-Silver (Table 16).

Texts (both read by the atom-level SMILES tokenizer of the chemistry core, where anything
in square brackets is one token):

* **source**: ``REACTANTS>CONDITIONS>PRODUCTS`` — canonical SMILES of the reactants and the
  products, and the words of the conditions (lower case, letters and digits) as tokens
  ``[&word]`` in the reagent slot (``Base`` → ``[&base]``; ``H2SO4, heat`` → ``[&h2so4][&heat]``);
  acid- and base-catalysed versions of one reaction differ only there. At prediction, a
  condition word the model never saw is left out (counted in ``details``); an unknown
  SMILES symbol makes that prediction fail (counted; the run goes on).
* **target**: one ``[subtype]`` token per step followed by the step's intermediate as
  canonical SMILES: ``[acid_base_proton_transfer][CH2-]C=O[nucleophilic_addition]CC([O-])CC=O...``.

:func:`decode_steps` turns a generated target back into steps; the predictor answers each
reaction with those steps as the JSON list the suite's parser reads (``[{"step", "type",
"subtype", "intermediate_smiles"}, ...]``), or with the raw generated text when it is not a
step sequence (the parser then fails on it and the error taxonomy counts an
``unparsed_answer``).

:func:`train_mechanism_model` trains into a folder (resumable pieces, early stopping on a
held-out share of the training reactions); the ``mechanism-seq2seq:DIR`` model kind loads it.
The folder records the families it was trained on, so a result splits in-domain and
out-of-domain (Table 16) by the model's own training set.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.chem.molecules import rdkit_log_silenced, try_canonical
from chemassay.chem.tokenizer import TokenizationError, tokenize_smiles
from chemassay.contract.errors import UserInputError
from chemassay.models.registry import ModelKind
from chemassay.models.seq2seq import Seq2SeqTrainReport, get_config, load_seq2seq, train_seq2seq
from chemassay.models.spec import check_options, option_int
from chemassay.runtime.files import sha256_file
from chemassay.suites.mechanism.records import Reaction, Step
from chemassay.suites.mechanism.retrieval import normalized_name, reaction_family
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE, TAXONOMY

TASK = "mechanism"
MAX_CONDITION_WORDS = 16
LABEL_TOKENS: dict[str, str] = {f"[{entry.subtype}]": entry.subtype for entry in TAXONOMY}
"""Target token → subtype, for the 31 subtypes of the taxonomy."""
_WORD = re.compile(r"[a-z0-9]+")

MODEL_KIND = ModelKind(
    name="mechanism-seq2seq", protocols=("mechanism-predictor",),
    factory="chemassay.suites.mechanism.learned:create_mechanism_seq2seq", arg="DIR", arg_required=True,
    description=("a sequence-to-sequence model trained here on template expansions (chemassay mechanism train): "
                 "reaction -> step types and intermediates"),
    options={"beam": "beam width (default 1: greedy); the best beam is the answer",
             "device": "cpu (default) or cuda", "threads": "CPU threads for torch",
             "batch_size": "reactions decoded together (default 32)",
             "max_new_tokens": "longest answer in tokens (default: twice the longest training target)"},
    extra="train", suite="mechanism", example="mechanism-seq2seq:runs/mechanism-small",
)


def _canonical(smiles: str) -> str:
    return try_canonical(smiles) or smiles


def condition_tokens(conditions: str | None) -> list[str]:
    """The condition words of a reaction as source tokens ``[&word]`` (at most 16)."""
    words = _WORD.findall((conditions or "").lower())
    return [f"[&{word}]" for word in words[:MAX_CONDITION_WORDS]]


def mechanism_source(reactants: Sequence[str], products: Sequence[str], conditions: str | None,
                     known: set[str] | None = None) -> tuple[str, int]:
    """The source text of a reaction and how many condition words were left out because
    ``known`` (a vocabulary's tokens) lacks them."""
    with _silenced():
        left = ".".join(_canonical(s) for s in reactants)
        right = ".".join(_canonical(s) for s in products)
    words = condition_tokens(conditions)
    kept = [w for w in words if known is None or w in known]
    return f"{left}>{''.join(kept)}>{right}", len(words) - len(kept)


def mechanism_target(steps: Sequence[Step]) -> str:
    """The target text of a mechanism (see the module docstring)."""
    with _silenced():
        return "".join(f"[{step.subtype}]{_canonical(step.intermediate_smiles)}" for step in steps)


def _silenced():
    return rdkit_log_silenced()


def decode_steps(text: str) -> list[dict[str, Any]] | None:
    """The steps of a generated target (``None`` when it is not one: it does not tokenize,
    or does not start with a step label); each ``{"step", "type", "subtype",
    "intermediate_smiles"}``. A label followed by no SMILES gives an empty intermediate (it
    scores as invalid)."""
    try:
        tokens = tokenize_smiles(text)
    except TokenizationError:
        return None
    if not tokens or tokens[0] not in LABEL_TOKENS:
        return None
    steps: list[dict[str, Any]] = []
    for token in tokens:
        if token in LABEL_TOKENS:
            subtype = LABEL_TOKENS[token]
            steps.append({"step": len(steps) + 1, "type": SUBTYPE_TO_TYPE[subtype], "subtype": subtype,
                          "intermediate_smiles": ""})
        else:
            steps[-1]["intermediate_smiles"] += token
    return steps


def training_pairs(reactions: Sequence[Reaction]) -> tuple[list[tuple[str, str]], list[dict[str, str]]]:
    """``(source, target)`` of every reaction whose steps all carry a taxonomy subtype, and
    the reactions left out with the reason."""
    pairs: list[tuple[str, str]] = []
    left_out: list[dict[str, str]] = []
    for reaction in reactions:
        if not reaction.steps:
            left_out.append({"reaction_id": reaction.reaction_id, "reason": "no mechanism"})
            continue
        unknown = [s.subtype for s in reaction.steps if s.subtype not in SUBTYPE_TO_TYPE]
        if unknown:
            left_out.append({"reaction_id": reaction.reaction_id, "reason": f"subtype outside the taxonomy: {unknown[0]!r}"})
            continue
        source, _ = mechanism_source(reaction.reactants, reaction.products, reaction.conditions)
        pairs.append((source, mechanism_target(reaction.steps)))
    return pairs, left_out


def family_records(reactions: Sequence[Reaction]) -> list[dict[str, Any]]:
    """One record per family of the training reactions (id, name, step labels): what a
    model folder keeps to tell in-domain from out-of-domain reactions later."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for reaction in reactions:
        key = (reaction_family(reaction.reaction_id), normalized_name(reaction.name))
        if key not in seen:
            seen[key] = {"reaction_id": reaction.reaction_id, "name": reaction.name,
                         "subtypes": [step.subtype for step in reaction.steps]}
    return list(seen.values())


def families_as_reactions(records: Sequence[Mapping[str, Any]]) -> list[Reaction]:
    """The :class:`Reaction` stand-ins of :func:`family_records` (enough for the family relation)."""
    return [
        Reaction(str(r["reaction_id"]), None, r.get("name"), (), (), "",
                 tuple(Step(i, SUBTYPE_TO_TYPE.get(s or "", None), s, "") for i, s in enumerate(r.get("subtypes") or [], 1)))
        for r in records
    ]


@dataclass
class MechanismTrainReport(Seq2SeqTrainReport):
    """What :func:`train_mechanism_model` did: the seq2seq report, with ``train_pairs`` and
    ``valid_pairs`` counting the reactions used and ``left_out`` the reactions not usable."""

    left_out: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items() if k != "left_out"} | {
            "left_out": len(self.left_out)}


def train_mechanism_model(
    train: str | os.PathLike | Sequence[Reaction],
    out: str | os.PathLike,
    *,
    config: str = "small",
    valid_fraction: float = 0.05,
    seed: int = 0,
    max_minutes: float | None = None,
    stop_after_epochs: int | None = None,
    device: str = "auto",
    threads: int | None = None,
    progress: bool | None = None,
    max_epochs: int | None = None,
    steps_per_epoch: int | None = None,
    batch_size: int | None = None,
    **overrides: Any,
) -> MechanismTrainReport:
    """Train (or resume) the mechanism model on ``train`` (an oMeBench file — the silver
    expansion — or a dataset name, or reactions) into ``out``.

    A seeded ``valid_fraction`` of the reactions is held out for the validation loss (early
    stopping); targets longer than the config's positions are dropped and counted. Calling
    again with the same arguments resumes an unfinished run (``max_minutes`` per piece).
    ``overrides`` change the seq2seq config (``lr=5e-4``...).
    """
    from chemassay.suites.mechanism.api import load_reactions

    if not 0.0 <= valid_fraction < 0.5:
        raise UserInputError(f"--valid-fraction {valid_fraction}: must be at least 0 and below 0.5")
    reactions = load_reactions(train)
    pairs, left_out = training_pairs(reactions)
    if not pairs:
        raise UserInputError(f"{train}: no reaction with a mechanism on the taxonomy to train on")
    order = np.random.default_rng(seed).permutation(len(pairs))
    n_valid = int(round(valid_fraction * len(pairs))) if len(pairs) > 1 else 0
    valid = [pairs[i] for i in sorted(order[:n_valid])]
    kept = [pairs[i] for i in sorted(order[n_valid:])]
    source_label = str(train) if isinstance(train, (str, os.PathLike)) else "in-memory reactions"
    metadata: dict[str, Any] = {"task": TASK, "train": source_label, "train_reactions": len(reactions),
                                "valid_fraction": valid_fraction, "families": family_records(reactions),
                                "source_format": "REACTANTS>[&condition words]>PRODUCTS",
                                "target_format": "[subtype]INTERMEDIATE per step"}
    if isinstance(train, (str, os.PathLike)):
        from chemassay.suites.mechanism.data import reactions_path

        metadata["train_sha256"] = sha256_file(reactions_path(train))
    chosen = get_config(config, **overrides)
    report = train_seq2seq(kept, out, config=chosen, valid=valid or None, tokenizer="smiles", seed=seed,
                           max_minutes=max_minutes, stop_after_epochs=stop_after_epochs, device=device, threads=threads,
                           progress=progress, max_epochs=max_epochs, steps_per_epoch=steps_per_epoch,
                           batch_size=batch_size, metadata=metadata)
    base = {f.name: getattr(report, f.name) for f in fields(report)}
    base.update(train_pairs=len(kept), valid_pairs=len(valid), dropped=dict(report.dropped or {}))
    return MechanismTrainReport(**base, left_out=left_out)


class MechanismSeq2Seq:
    """mechanism-predictor of a trained model folder (see the module docstring)."""

    def __init__(self, model, *, beam: int = 1, batch_size: int = 32, max_new_tokens: int | None = None,
                 folder: str = "") -> None:
        self.model = model
        self.beam = beam
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.folder = folder
        metadata = (model.training_info or {}).get("metadata") or {}
        self.metadata = metadata
        self.name = f"mechanism-seq2seq:{folder}"
        self.known = set(model.vocab.tokens)
        self.failures: dict[int, str] = {}
        self.details: list[dict[str, Any]] = []

    @property
    def domain_pool(self) -> list[Reaction]:
        """The families of the training set (in-domain: a family among them, Table 16)."""
        return families_as_reactions(self.metadata.get("families") or [])

    @property
    def domain_pool_name(self) -> str:
        return f"training set of {self.folder} ({self.metadata.get('train')})"

    def describe(self) -> dict[str, Any]:
        info = self.model.training_info or {}
        return {"folder": self.folder, "config": self.model.config.name, "beam": self.beam,
                "train": self.metadata.get("train"), "train_sha256": self.metadata.get("train_sha256"),
                "train_pairs": info.get("train_pairs"), "global_step": info.get("global_step"),
                "weights_sha256": self.model.checksum()}

    def checksum(self) -> str:
        return self.model.checksum()

    def predict_mechanisms(self, reactions: Sequence[Mapping[str, Any]]) -> list[str]:
        """One answer per record: the decoded steps as JSON text, the raw generated text
        when it is not a step sequence, or ``""`` with the reason in ``failures`` when the
        reaction cannot be encoded (an unknown SMILES symbol, too long)."""
        from chemassay.suites.mechanism.baselines import record_to_reaction

        sources, dropped = [], []
        for record in reactions:
            reaction = record_to_reaction(record)
            source, missing = mechanism_source(reaction.reactants, reaction.products, reaction.conditions, self.known)
            sources.append(source)
            dropped.append(missing)
        generated = self.model.generate(sources, beam=self.beam, n_best=1, batch_size=self.batch_size,
                                        max_new_tokens=self.max_new_tokens)
        answers: list[str] = []
        self.failures = {}
        self.details = []
        for index, (outcome, missing) in enumerate(zip(generated, dropped, strict=True)):
            detail: dict[str, Any] = {"condition_words_unknown": missing} if missing else {}
            if outcome.error is not None or not outcome.texts:
                self.failures[index] = f"cannot encode the reaction: {outcome.error or 'no output'}"
                answers.append("")
            else:
                steps = decode_steps(outcome.texts[0])
                answers.append(json.dumps(steps) if steps is not None else outcome.texts[0])
                if steps is None:
                    detail["not_a_step_sequence"] = True
            self.details.append(detail)
        return answers


def load_mechanism_model(folder: str | os.PathLike, *, device: str = "cpu", threads: int | None = None, **options: Any):
    """A :class:`MechanismSeq2Seq` from a folder written by :func:`train_mechanism_model`;
    a folder of another task (a reaction model) or a broken one is a one-line error."""
    model = load_seq2seq(folder, device=device, threads=threads)
    task = ((model.training_info or {}).get("metadata") or {}).get("task")
    if task != TASK:
        raise UserInputError(f"{folder}: a seq2seq model of task {task!r}, not a mechanism model "
                             "(train one with 'chemassay mechanism train')")
    return MechanismSeq2Seq(model, folder=str(folder), **options)


def create_mechanism_seq2seq(spec, protocol: str, context: dict[str, Any]) -> MechanismSeq2Seq:
    """Factory of the ``mechanism-seq2seq`` kind."""
    check_options(spec, set(MODEL_KIND.options))
    if not spec.arg:
        raise UserInputError("mechanism-seq2seq needs a model folder: mechanism-seq2seq:DIR")
    return load_mechanism_model(
        spec.arg, device=spec.options.get("device") or context.get("device") or "cpu",
        threads=option_int(spec, "threads", None, minimum=1),
        beam=option_int(spec, "beam", 1, minimum=1), batch_size=option_int(spec, "batch_size", 32, minimum=1),
        max_new_tokens=option_int(spec, "max_new_tokens", None, minimum=1),
    )
