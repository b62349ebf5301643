"""Check that chemassay's deterministic augmentations give the authors' exact strings.

``canonical``, ``explicit_h`` and ``kekulize`` are single RDKit writer calls
(``MolToSmiles`` with defaults, ``allHsExplicit=True``, ``kekuleSmiles=True``); RDKit's
canonical atom ranking changes between releases, so string equality with the AMORE files
depends on the RDKit version. This standalone script (it needs only RDKit, so it runs in a
separate environment with an older RDKit, e.g. ``pip install rdkit==2023.9.6``) makes those
calls on the shipped originals and counts rows identical to the authors' files. Skips
cleanly when the AMORE data folder is absent.
Run: ``python benchmarks/robustness_old_rdkit_strings.py [AMORE_DATA_DIR]``.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAIRS = {
    "chebi20": ("CHEBI-20/test_original.txt", {
        "canonical": "CHEBI-20/test_rdkit_canonical.csv", "explicit_h": "CHEBI-20/test_explicit_hs.csv",
        "kekulize": "CHEBI-20/test_kekulize_smiles.csv"}),
    "isomers": ("qm9/isomers_original.csv", {
        "canonical": "qm9/isomers_rdkit_canonical.csv", "explicit_h": "qm9/isomers_explicit_hs.csv",
        "kekulize": "qm9/isomers_kekulize.csv"}),
}
WRITER_OPTIONS = {"canonical": {}, "explicit_h": {"allHsExplicit": True}, "kekulize": {"kekuleSmiles": True}}


def read_smiles(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader((line.rstrip("\r\n") for line in handle), delimiter="\t", quoting=csv.QUOTE_NONE))
    column = rows[0].index("SMILES")
    return [row[column] for row in rows[1:] if row]


def main() -> int:
    candidates = [Path(sys.argv[1])] if len(sys.argv) > 1 else []
    if os.environ.get("CHEMASSAY_AMORE_DATA"):
        candidates.append(Path(os.environ["CHEMASSAY_AMORE_DATA"]))
    candidates += [REPO.parent / "shared" / "data" / "amore", REPO.parent.parent / "shared" / "data" / "amore"]
    folder = next((c for c in candidates if (c / "CHEBI-20").is_dir()), None)
    if folder is None:
        print("SKIP: AMORE data folder not found")
        return 0
    from rdkit import Chem, RDLogger, __version__

    RDLogger.DisableLog("rdApp.*")
    print(f"RDKit {__version__}; AMORE data {folder}")
    print("| dataset | augmentation | rows identical to the authors' string |")
    print("| --- | --- | --- |")
    for dataset, (original, files) in PAIRS.items():
        mols = [Chem.MolFromSmiles(s) for s in read_smiles(folder / original)]
        for kind, name in files.items():
            theirs = read_smiles(folder / name)
            ours = [Chem.MolToSmiles(m, **WRITER_OPTIONS[kind]) for m in mols]
            same = sum(a == b for a, b in zip(ours, theirs, strict=True))
            print(f"| {dataset} | {kind} | {same}/{len(theirs)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
