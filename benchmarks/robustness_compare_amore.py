"""Compare chemassay's AMORE augmentations and retrieval with the authors' files.

Needs the AMORE data folder (``shared/data/amore`` next to the repository, or
``$CHEMASSAY_AMORE_DATA``): the authors' augmented ChEBI-20 and QM9 files, which are not
shipped with chemassay (the AMORE repository has no license). Without it the script
prints why and exits 0.

It reports, per augmentation:
1. augmentation agreement: rows where our output is the same string as the authors',
   rows where it is the same molecule (canonical SMILES + InChIKey), and rows where the
   authors' own output is not the original molecule;
2. retrieval on the authors' files vs on ours with the built-in encoders (Acc@1, Acc@5,
   MRR both ways), and whether our exact ranking equals AMORE's own procedure (a FAISS
   ``IndexFlatL2`` searched one query at a time with k = n) rank for rank.

Run: ``PYTHONPATH=src python benchmarks/robustness_compare_amore.py [--quick]``.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

AUTHOR_FILES = {
    "chebi20": {
        "original": "CHEBI-20/test_original.txt",
        "canonical": "CHEBI-20/test_rdkit_canonical.csv",
        "explicit_h": "CHEBI-20/test_explicit_hs.csv",
        "kekulize": "CHEBI-20/test_kekulize_smiles.csv",
        "cycle_renumber": "CHEBI-20/test_cycle_renumering.csv",
    },
    "isomers": {
        "original": "qm9/isomers_original.csv",
        "canonical": "qm9/isomers_rdkit_canonical.csv",
        "explicit_h": "qm9/isomers_explicit_hs.csv",
        "kekulize": "qm9/isomers_kekulize.csv",
        "cycle_renumber": "qm9/isomers_cycle.csv",
    },
}
DETERMINISTIC = ("canonical", "explicit_h", "kekulize")


def find_amore_data() -> Path | None:
    """The AMORE data folder, or None when it is not on this machine."""
    candidates = []
    if os.environ.get("CHEMASSAY_AMORE_DATA"):
        candidates.append(Path(os.environ["CHEMASSAY_AMORE_DATA"]))
    for parent in (REPO.parent, REPO.parent.parent):
        candidates.append(parent / "shared" / "data" / "amore")
    return next((c for c in candidates if (c / "CHEBI-20").is_dir()), None)


def read_author_smiles(path: Path) -> list[str]:
    """SMILES column of an AMORE file (tab-separated, CRLF, optional index column), as pandas reads it."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader((line.rstrip("\r\n") for line in handle), delimiter="\t", quoting=csv.QUOTE_NONE))
    header = rows[0]
    column = header.index("SMILES")
    return [row[column] for row in rows[1:] if row]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Only the QM9 isomers.")
    parser.add_argument("--no-reference", action="store_true", help="Skip the (slow) per-query FAISS rank check.")
    args = parser.parse_args()
    folder = find_amore_data()
    if folder is None:
        print("SKIP: AMORE data folder not found (set CHEMASSAY_AMORE_DATA or put it in ../shared/data/amore)")
        return 0
    sys.path.insert(0, str(REPO / "src"))
    import numpy as np

    from chemassay.models import load_model
    from chemassay.runtime.progress import settings
    from chemassay.suites.robustness.amore import augmented_rows, score_embeddings
    from chemassay.suites.robustness.augment import molecule_identity
    from chemassay.suites.robustness.data import load_amore
    from chemassay.suites.robustness.encoders import encode_cached
    from chemassay.suites.robustness.retrieval import reference_ranks_faiss, true_match_ranks

    settings.quiet = True
    print(f"AMORE data: {folder}")
    datasets = ["isomers"] if args.quick else ["isomers", "chebi20"]
    for dataset in datasets:
        table = load_amore(dataset)
        files = AUTHOR_FILES[dataset]
        author_original = read_author_smiles(folder / files["original"])
        same_text = sum(a == b for a, b in zip(author_original, table.smiles, strict=True))
        print(f"\n== {dataset}: {len(table)} molecules; shipped originals identical to the authors' text: "
              f"{same_text}/{len(table)}")
        identity = [molecule_identity(s) for s in table.smiles]
        print("| augmentation | same string as authors | ours same molecule | authors' same molecule | authors' wrong rows |")
        print("| --- | --- | --- | --- | --- |")
        ours: dict[str, list[str]] = {}
        theirs: dict[str, list[str]] = {}
        for kind in ("canonical", "explicit_h", "kekulize", "cycle_renumber"):
            rows = augmented_rows(table, kind, seed=0, n_jobs=2)
            ours[kind] = [r.augmented or r.original for r in rows]
            theirs[kind] = read_author_smiles(folder / files[kind])
            same_string = sum(a == b for a, b in zip(ours[kind], theirs[kind], strict=True))
            ours_ok = sum(r.status in ("ok", "not_applicable") for r in rows)
            wrong = []
            for index, text in enumerate(theirs[kind]):
                try:
                    if molecule_identity(text) != identity[index]:
                        wrong.append(index)
                except ValueError:
                    wrong.append(index)
            shown = ", ".join(str(i) for i in wrong[:10]) or "-"
            string_cell = f"{same_string}/{len(table)}" if kind in DETERMINISTIC else f"{same_string} (random labels)"
            print(f"| {kind} | {string_cell} | {ours_ok}/{len(table)} | {len(table) - len(wrong)}/{len(table)} | {shown} |")
        # Our renumbering restricted to the rings AMORE's code renumbers, compared with its file.
        scoped = augmented_rows(table, "cycle_renumber_amore", seed=0, n_jobs=2)
        ours["cycle_renumber_amore"] = [r.augmented or r.original for r in scoped]
        theirs["cycle_renumber_amore"] = theirs["cycle_renumber"]
        same_digits = sum(
            re.sub(r"\d", "", a) == re.sub(r"\d", "", b)
            for a, b in zip(ours["cycle_renumber_amore"], theirs["cycle_renumber"], strict=True)
        )
        changed_theirs = sum(a != b for a, b in zip(theirs["cycle_renumber"], table.smiles, strict=True))
        changed_ours = sum(a != b for a, b in zip(ours["cycle_renumber_amore"], table.smiles, strict=True))
        print(f"| cycle_renumber_amore | same text outside digits: {same_digits}/{len(table)}; rows changed: "
              f"ours {changed_ours}, authors {changed_theirs} | "
              f"{sum(r.status in ('ok', 'not_applicable') for r in scoped)}/{len(table)} | - | - |")
        for spec in ("fingerprint", "char-ngram"):
            encoder = load_model(spec, "encoder")
            original_layers = encode_cached(encoder, table.smiles).layers
            print(f"\n{dataset} / {spec}: retrieval on the authors' files vs ours (%, o2a and a2o)")
            print("| augmentation | files | o2a Acc@1 | o2a Acc@5 | o2a MRR | a2o Acc@1 | a2o Acc@5 | a2o MRR | "
                  "ranks = AMORE FAISS procedure |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for kind in ours:
                pairs = (("authors", theirs[kind]), ("ours", ours[kind]))
                if kind == "cycle_renumber_amore":
                    pairs = (("ours, AMORE scope", ours[kind]),)
                for label, texts in pairs:
                    augmented_layers = encode_cached(encoder, texts).layers
                    scores = score_embeddings(original_layers, augmented_layers)
                    m = scores.metrics
                    check = "-"
                    if label == "authors" and not args.no_reference:
                        started = time.perf_counter()
                        reference = reference_ranks_faiss(augmented_layers[0], original_layers[0])
                        exact = true_match_ranks(augmented_layers[0], original_layers[0]).ranks
                        agree = int(np.sum(reference == exact))
                        check = f"{agree}/{len(exact)} a2o ranks equal ({time.perf_counter() - started:.1f} s)"
                    print(f"| {kind} | {label} | {100 * m['o2a_acc@1']:.2f} | {100 * m['o2a_acc@5']:.2f} | "
                          f"{100 * m['o2a_mrr']:.2f} | {100 * m['a2o_acc@1']:.2f} | {100 * m['a2o_acc@5']:.2f} | "
                          f"{100 * m['a2o_mrr']:.2f} | {check} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
