"""Captioning under rewrites (AMORE's Tables 3 and 11): ROUGE and METEOR of a predictions file
of captions per rewrite, their correlation with retrieval, and the string analysis.

Input: a table (CSV/TSV, gzip allowed) with one row per (molecule, rewrite) and the columns
``id``, ``augmentation`` (``original`` for the unrewritten input, else a rewrite's name),
``prediction`` (the model's caption), optionally ``SMILES`` (the string the model was given:
needed for the Levenshtein analysis) and ``reference`` (the gold caption). Gold captions may
instead come from a second table with ``id`` and ``description`` (ChEBI-20's
``CID<TAB>SMILES<TAB>description`` files have this layout). Every row without a reference, or
with an empty prediction, is counted in ``skipped`` with its line.

Metrics (per rewrite, means over molecules with 95 % bootstrap intervals): ROUGE-1, ROUGE-2
and ROUGE-L F-measures of Google's ``rouge-score`` (its default tokenizer, no stemming:
MolT5's evaluation script's settings) and METEOR of ``nltk`` (``meteor_score`` with NLTK's
defaults, lower-cased word tokens; MolT5 tokenizes with SciBERT's WordPiece tokenizer, which
cannot be downloaded here, so METEOR values are close to but not identical with the paper's).
METEOR needs WordNet: NLTK's own ``wordnet`` corpus when it is installed, else the WordNet 3.0
database files of Debian's ``wordnet-base`` package (``/usr/share/wordnet``, or the folder in
``$CHEMASSAY_WORDNET``), copied once under ``$CHEMASSAY_HOME/nltk_data`` (the same WordNet
3.0 that NLTK ships). Without either, METEOR is left out with a warning and ROUGE is still
computed.

Correlations: with an AMORE result of the same model on the same molecules (``retrieval``,
its per-molecule ``<augmentation>/o2a_acc@1``), the Spearman correlation between retrieval
success and ROUGE-2 / METEOR per rewrite (the paper's Table 3 discussion); with the SMILES
column, the paper's Table 11: mean (std) SMILES length and Levenshtein ratio (edit distance /
original length) and the Spearman correlation of the ratio with ROUGE-1 and METEOR.
"""

from __future__ import annotations

import os
import re
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from chemassay.contract.errors import UserInputError, require
from chemassay.runtime.cache import chemassay_home
from chemassay.suites.robustness.amore import levenshtein_ratio
from chemassay.suites.robustness.data import read_table

ORIGINAL = "original"
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
    "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
    "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)
"""WordNet 3.0's lexicographer files in number order (the ``lexnames`` file Debian does not ship)."""
WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb", "index.adj",
                 "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")
_WORD = re.compile(r"\w+|[^\w\s]")


def tokenize_words(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens (METEOR's input)."""
    return _WORD.findall(text.lower())


def wordnet(home: Path | None = None):
    """A WordNet 3.0 reader for METEOR (see the module docstring), or ``None`` if none is found."""
    nltk = require("nltk", "captions", "METEOR")
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        nltk.data.find("corpora/wordnet")
        from nltk.corpus import wordnet as installed

        installed.ensure_loaded()
        return installed
    except (LookupError, OSError):  # no NLTK WordNet: try the Debian files below
        pass
    source = Path(os.environ.get("CHEMASSAY_WORDNET", "/usr/share/wordnet"))
    if not all((source / name).is_file() for name in WORDNET_FILES):
        return None

    root = (home or chemassay_home()) / "nltk_data"
    folder = root / "corpora" / "wordnet"
    if not all((folder / name).is_file() for name in (*WORDNET_FILES, "lexnames")):
        folder.mkdir(parents=True, exist_ok=True)
        for name in WORDNET_FILES:
            shutil.copyfile(source / name, folder / name)
        category = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
        (folder / "lexnames").write_text(
            "".join(f"{i:02d}\t{name}\t{category[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)),
            encoding="utf-8")
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))

    class WordNet30(WordNetCorpusReader):
        """WordNet 3.0 itself: no mapping to another WordNet version is needed."""

        def map_wn(self, version="wordnet"):
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WordNet30(str(folder), None)


@dataclass
class CaptionTable:
    """Captions per molecule and rewrite, with references and input SMILES."""

    predictions: dict[str, dict[str, str]]
    """augmentation → id → caption."""
    smiles: dict[str, dict[str, str]]
    references: dict[str, str]
    ids: list[str]
    skipped: list[dict] = field(default_factory=list)


def read_captions(path: str | os.PathLike, references: str | os.PathLike | None = None) -> CaptionTable:
    """Read a predictions table (and optionally a references table); one-line errors for
    missing columns, counted skips for unusable rows."""
    header, rows = read_table(Path(path))
    lowered = {h.lower(): i for i, h in enumerate(header)}
    for needed in ("id", "augmentation", "prediction"):
        if needed not in lowered:
            raise UserInputError(f"{path}: no {needed!r} column (need id, augmentation, prediction; "
                                 "optional SMILES and reference)")
    column = {name: lowered.get(name) for name in ("id", "augmentation", "prediction", "smiles", "reference")}
    gold: dict[str, str] = {}
    if references is not None:
        ref_header, ref_rows = read_table(Path(references))
        ref_lower = {h.lower(): i for i, h in enumerate(ref_header)}
        id_at = ref_lower.get("id", ref_lower.get("cid"))
        text_at = ref_lower.get("description", ref_lower.get("reference"))
        if id_at is None or text_at is None:
            raise UserInputError(f"{references}: need an id (or CID) column and a description column")
        for _, fields in ref_rows:
            if max(id_at, text_at) < len(fields) and fields[text_at].strip():
                gold[fields[id_at].strip()] = fields[text_at].strip()
    elif column["reference"] is None:
        raise UserInputError(f"{path}: no 'reference' column; pass the gold captions with --references FILE")
    predictions: dict[str, dict[str, str]] = {}
    smiles: dict[str, dict[str, str]] = {}
    ids: list[str] = []
    skipped: list[dict] = []

    def cell(fields, name):
        index = column[name]
        return fields[index].strip() if index is not None and index < len(fields) else ""

    for line, fields in rows:
        item, kind, text = cell(fields, "id"), cell(fields, "augmentation"), cell(fields, "prediction")
        if not item or not kind:
            skipped.append({"line": line, "reason": "empty id or augmentation"})
            continue
        if column["reference"] is not None and cell(fields, "reference") and item not in gold:
            gold[item] = cell(fields, "reference")
        if not text:
            skipped.append({"line": line, "item": item, "augmentation": kind, "reason": "empty prediction"})
            continue
        if item in predictions.get(kind, {}):
            raise UserInputError(f"{path}: line {line}: a second prediction for id {item!r} and {kind!r}")
        predictions.setdefault(kind, {})[item] = text
        if column["smiles"] is not None:
            smiles.setdefault(kind, {})[item] = cell(fields, "smiles")
        if item not in ids:
            ids.append(item)
    for kind, by_id in predictions.items():
        for item in list(by_id):
            if item not in gold:
                skipped.append({"item": item, "augmentation": kind, "reason": "no reference caption"})
                del by_id[item]
    if not any(predictions.values()):
        raise UserInputError(f"{path}: no prediction with a reference caption to score")
    return CaptionTable(predictions, smiles, gold, ids, skipped)


def _spearman(first: Sequence[float], second: Sequence[float]) -> float:
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 3 or np.std(a[keep]) == 0 or np.std(b[keep]) == 0:
        return float("nan")
    return float(spearmanr(a[keep], b[keep]).statistic)


def score_captions(table: CaptionTable, retrieval: dict[str, Any] | None = None,
                   use_meteor: bool = True) -> tuple[dict[str, float], dict[str, list[float | None]], list[dict], list[str]]:
    """Metrics, per-molecule scores (aligned with ``table.ids``), the Table 3/11 rows and warnings.

    ``retrieval`` is an AMORE result (as a dict) whose ``item_ids`` are these ids and whose
    ``item_scores`` hold ``<augmentation>/o2a_acc@1``.
    """
    rouge = require("rouge_score.rouge_scorer", "captions", "ROUGE")

    scorer = rouge.RougeScorer(["rouge1", "rouge2", "rougeL"])
    warnings_out: list[str] = []
    reader = wordnet() if use_meteor else None
    if use_meteor and reader is None:
        warnings_out.append("METEOR left out: no WordNet found (install NLTK's wordnet corpus, or Debian's "
                            "wordnet-base, or set CHEMASSAY_WORDNET to a WordNet 3.0 dict folder)")
    meteor = None
    if reader is not None:
        from nltk.translate.meteor_score import meteor_score

        def meteor(reference: str, prediction: str) -> float:
            return float(meteor_score([tokenize_words(reference)], tokenize_words(prediction), wordnet=reader))

    hits: dict[str, dict[str, float]] = {}
    if retrieval:
        ids = [str(i) for i in retrieval.get("item_ids") or []]
        for key, values in (retrieval.get("item_scores") or {}).items():
            if key.endswith("/o2a_acc@1"):
                hits[key.split("/")[0]] = {i: v for i, v in zip(ids, values, strict=False) if v is not None}
    position = {item: index for index, item in enumerate(table.ids)}
    metrics: dict[str, float] = {}
    item_scores: dict[str, list[float | None]] = {}
    rows = []
    originals = table.smiles.get(ORIGINAL, {})
    for kind, by_id in table.predictions.items():
        per: dict[str, list[float | None]] = {k: [None] * len(table.ids) for k in ("rouge1", "rouge2", "rougeL", "meteor")}
        for item, text in by_id.items():
            scores = scorer.score(table.references[item], text)
            for key in ("rouge1", "rouge2", "rougeL"):
                per[key][position[item]] = float(scores[key].fmeasure)
            if meteor is not None:
                per["meteor"][position[item]] = meteor(table.references[item], text)
        row: dict[str, Any] = {"augmentation": kind, "n": len(by_id)}
        for key, values in per.items():
            present = [v for v in values if v is not None]
            if not present:
                continue
            metrics[f"{kind}/{key}"] = float(np.mean(present))
            item_scores[f"{kind}/{key}"] = values
            row[key] = metrics[f"{kind}/{key}"]
        if kind in hits:
            common = [i for i in by_id if i in hits[kind]]
            acc = [hits[kind][i] for i in common]
            row["acc@1"] = float(np.mean(acc)) if acc else float("nan")
            for key in ("rouge2", "meteor"):
                if f"{kind}/{key}" in item_scores:
                    rho = _spearman(acc, [per[key][position[i]] for i in common])
                    metrics[f"{kind}/spearman_acc1_vs_{key}"] = rho
                    row[f"spearman_acc1_vs_{key}"] = rho
        texts = table.smiles.get(kind, {})
        if kind != ORIGINAL and originals and texts:
            common = [i for i in by_id if originals.get(i) and texts.get(i)]
            ratios = [levenshtein_ratio(originals[i], texts[i]) for i in common]
            lengths = [len(texts[i]) for i in common]
            if common:
                row.update({"mean_length": float(np.mean(lengths)), "std_length": float(np.std(lengths)),
                            "levenshtein_ratio": float(np.mean(ratios)), "std_levenshtein_ratio": float(np.std(ratios))})
                metrics[f"{kind}/mean_length"] = row["mean_length"]
                metrics[f"{kind}/levenshtein_ratio"] = row["levenshtein_ratio"]
                for key in ("rouge1", "meteor"):
                    if f"{kind}/{key}" in item_scores:
                        rho = _spearman(ratios, [per[key][position[i]] for i in common])
                        metrics[f"{kind}/spearman_levenshtein_vs_{key}"] = rho
                        row[f"spearman_levenshtein_vs_{key}"] = rho
        rows.append(row)
    rows.sort(key=lambda r: (r["augmentation"] != ORIGINAL, r["augmentation"]))
    return metrics, item_scores, rows, warnings_out


def markdown_captions(rows: Sequence[dict], title: str = "") -> str:
    """The paper's Table 3 and Table 11 columns, one row per rewrite."""
    columns = ("acc@1", "rouge1", "rouge2", "rougeL", "meteor", "spearman_acc1_vs_rouge2", "spearman_acc1_vs_meteor",
               "mean_length", "levenshtein_ratio", "spearman_levenshtein_vs_rouge1", "spearman_levenshtein_vs_meteor")
    shown = [c for c in columns if any(c in r for r in rows)]
    lines = ([f"**{title}**", ""] if title else []) + ["| augmentation | n | " + " | ".join(shown) + " |",
                                                        "|" + " --- |" * (len(shown) + 2)]
    for row in rows:
        cells = []
        for c in shown:
            value = row.get(c)
            cells.append("-" if value is None or value != value else (f"{100 * value:.2f}" if c == "acc@1" else f"{value:.3f}"))
        lines.append(f"| {row['augmentation']} | {row['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
