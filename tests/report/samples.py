"""Results of every suite with the per-item fields the report's galleries and plots read
(hand-made, chemically meaningful examples), shared by the scorecard and browser tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from chemassay.contract.result import DatasetRef, InputRef, ModelRef, Result
from chemassay.report.intervals import attach_intervals


def _scored(suite: str, task: str, per_item: dict[str, list[float]], ids: list[str], **fields) -> Result:
    metrics = {key: float(np.mean(values)) for key, values in per_item.items()}
    result = Result(suite=suite, task=task, metrics=metrics, n=len(ids), item_ids=ids, item_scores=per_item, **fields)
    return attach_intervals(result, resamples=300, seed=0)


def stoichiometry_result(model: str = "seq2seq", em_rate: float = 0.6, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    n = 60
    ids = [f"line-{i + 1}" for i in range(n)]
    em = (rng.random(n) < em_rate).astype(float).tolist()
    from chemassay.suites.stoichiometry.scoring import score_lines

    scored = score_lines(
        # ethanol + acetic acid → a thioester: sulphur appears from nowhere, oxygen vanishes;
        # then an amide whose HCl by-product is dropped (a chlorine vanishes); then water, balanced
        ["{1}CC(=O)SCC.{1}O", "{1}CC(=O)NC", "{2}O"], ["{1}CC(=O)OCC.{1}O", "{1}CC(=O)NC.{1}Cl", "{2}O"],
        ["{1}CC(=O)O.{1}OCC", "{1}CC(=O)Cl.{1}NC", "{2}[H][H].{1}O=O"])
    details = {"rows": [sample.row() for sample in scored.samples], "breakdown": scored.breakdown}
    return _scored("stoichiometry", "evaluate", {"EM": em, "JAC": [min(1.0, v + 0.3) for v in em]}, ids,
                   model=ModelRef(spec=f"predictions:{model}.txt", name=model, kind="predictions", checksum="c" * 64),
                   dataset=DatasetRef(name="uspto-15k", sha256="1" * 64),
                   setting={"variant": "smiles_t2_x1", "split": "test_in"}, config={"encoding": "smiles"},
                   details=details)


def reaction_ood_result(model: str = "template-knn", seed: int = 1) -> Result:
    rng = np.random.default_rng(seed)
    n = 50
    ids = [f"rxn-{i}" for i in range(n)]
    top1 = (rng.random(n) < 0.6).astype(float).tolist()
    items = [
        {"id": "rxn-0", "reactants": "CC(=O)Cl.OCc1ccccc1", "target": "CC(=O)OCc1ccccc1",
         "predictions": ["CC(=O)Oc1ccccc1C", "CC(=O)OCc1ccccc1"], "rank": 2},
        {"id": "rxn-1", "reactants": "Brc1ccccc1.OB(O)c1ccncc1", "target": "c1ccc(-c2ccncc2)cc1",
         "predictions": ["c1ccc(-c2ccccc2)cc1"], "rank": None},
        {"id": "rxn-2", "reactants": "CCO.CC(=O)O", "target": "CCOC(C)=O", "predictions": ["CCOC(C)=O"], "rank": 1},
    ]
    years = [{"group": 1976 + k, "n": 5, "top1_accuracy": float(0.4 + 0.01 * k)} for k in range(30)]
    return _scored("reaction-ood", "evaluate", {"top1_accuracy": top1, "top5_accuracy": [1.0 if v else float(rng.random() < 0.5) for v in top1]},
                   ids, model=ModelRef(spec=f"baseline:{model}", name=model, kind="baseline", checksum="d" * 64),
                   dataset=DatasetRef(name="schneider-50k", sha256="2" * 64),
                   setting={"split": "document", "part": "test_ood"},
                   details={"items": items, "breakdowns": {"year": years}})


def generation_result(plot: Path | None = None) -> Result:
    from chemassay.suites.generation.details import EvaluateDetails

    details = EvaluateDetails(counts={"input": 30000, "valid": 7200, "invalid": 22800, "unique_valid": 7100},
                              plot=str(plot) if plot is not None else None)
    return Result(suite="generation", task="evaluate", metrics={"valid": 0.24, "FCD/Test": 5.58}, n=30000,
                  model=ModelRef(spec="baseline:ngram", name="ngram", kind="baseline", checksum="e" * 64),
                  dataset=DatasetRef(name="moses", sha256="3" * 64), details=details)


def robustness_result(model: str = "char-ngram") -> Result:
    n = 40
    ids = [f"CID{i}" for i in range(n)]
    per_item = {f"{a}/o2a_acc@1": [float(i % k == 0) for i in range(n)]
                for a, k in (("canonical", 2), ("explicit_h", 9), ("kekulize", 1), ("cycle_renumber", 1))}
    misses = [{"augmentation": "explicit_h", "id": "CID1", "original": "OC(=O)c1ccccc1O",
               "augmented": "[H]OC(=O)c1c([H])c([H])c([H])c([H])c1O[H]", "retrieved": "OC(=O)c1ccc(O)cc1", "rank": 7}]
    per_layer = {"canonical": [{"o2a_acc@1": 0.2 + 0.05 * k} for k in range(7)],
                 "explicit_h": [{"o2a_acc@1": 0.01 * k} for k in range(7)]}
    return _scored("robustness", "evaluate", per_item, ids,
                   model=ModelRef(spec=f"baseline:{model}", name=model, kind="baseline", checksum="f" * 64),
                   dataset=DatasetRef(name="amore-chebi20", sha256="4" * 64), setting={"dataset": "chebi20"},
                   details={"misses": misses, "per_layer": per_layer})


def mechanism_result(model: str = "nearest-neighbour") -> Result:
    from chemassay.suites.mechanism.details import EvaluateDetails

    n = 10
    ids = [f"NR-{i:03d}" for i in range(n)]
    s_total = [0.0, 0.2, 0.5, 1.0, 0.0, 0.3, 0.1, 0.0, 0.6, 0.4]
    reactions = [{
        "reaction_id": "NR-000", "level": "easy", "status": "scored", "n_gold": 3, "n_pred": 3,
        "S_total": 0.0, "S_partial": 0.1, "V": 0.67, "L": 0.33,
        "alignment": ["skip_gold", "match", "type_mismatch", "skip_pred"],
        "gold_steps": [{"subtype": "acid_base_proton_transfer", "smiles": "CC(=[OH+])O"},
                       {"subtype": "nucleophilic_addition", "smiles": "CC(O)(O)OCC"},
                       {"subtype": "leaving_group_elimination", "smiles": "CCOC(C)=O"}],
        "predicted_steps": [{"subtype": "nucleophilic_addition", "smiles": "CC(O)(O)OCC"},
                            {"subtype": "proton_transfer", "smiles": "CCOC(C)=O"},
                            {"subtype": "dissociation", "smiles": "C1CC1(("}],
    }]
    level = {"n": 4, "S_partial": 0.2, "V": 1.0, "L": 0.3}
    details = EvaluateDetails(
        reactions=reactions,
        by_level={"easy": {**level, "S_total": 0.2}, "medium": {**level, "S_total": 0.1},
                  "hard": {**level, "n": 2, "S_total": 0.05}},
        by_type={"addition": {"steps": 5, "match_rate": 0.3, "exact_rate": 0.1, "partial_credit": 0.2},
                 "proton_transfer": {"steps": 7, "match_rate": 0.5, "exact_rate": 0.2, "partial_credit": 0.3}})
    return _scored("mechanism", "evaluate", {"S_total": s_total, "V": [1.0] * n}, ids,
                   model=ModelRef(spec=f"baseline:{model}", name=model, kind="baseline", checksum="9" * 64),
                   dataset=DatasetRef(name="omebench", sha256="5" * 64), setting={"dataset": "gold", "prompt": "one-shot"},
                   details=details)


def tiny_png(path: Path) -> Path:
    """A small real PNG (matplotlib), like the suites' plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(2, 1.5), dpi=50)
    axis.plot([0, 1, 2], [1, 3, 2])
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


def every_suite(folder: Path) -> list[Path]:
    """Write one or two results of every suite under ``folder``; return the files."""
    folder.mkdir(parents=True, exist_ok=True)
    png = tiny_png(folder / "generation" / "properties.png")
    results = {
        "stoichiometry/seq2seq.json": stoichiometry_result("seq2seq", 0.9, 0),
        "stoichiometry/copy.json": stoichiometry_result("copy-coefficient", 0.1, 1),
        "reaction-ood/knn.json": reaction_ood_result(),
        "generation/metrics.json": generation_result(Path("properties.png")),
        "robustness/ngram.json": robustness_result(),
        "mechanism/nn.json": mechanism_result(),
    }
    paths = []
    for name, result in results.items():
        paths.append(result.write(folder / name))
    assert png.is_file()
    return paths


def extra_input(path: str) -> InputRef:
    """An input reference without checksum (for hand-made results)."""
    return InputRef(path=path)
