"""``chemassay demo --suite reaction-ood``: clean, split, train the baseline, evaluate, plot.

On a sample of the bundled Schneider 50k set (real USPTO reactions with patent numbers and
NameRxn classes) made of whole patents (patents in seeded random order until 6,000
reactions, so that a patent's reactions stay together as in the full set): clean them (Section S1.1), make a random split and a
document (patent) split with the shipped Schneider split definitions, train the
template-kNN baseline on each training part (templates from the shipped RXNMapper atom
maps), evaluate it on the random test set and on the document split's in-distribution and
new-patent test sets, draw the accuracy bars (Fig. 2) and measure the distribution shift
(Fig. 6).
"""

from __future__ import annotations

from pathlib import Path

from chemassay.report.result import DatasetRef, Result
from chemassay.runtime.progress import info
from chemassay.suites.reaction_ood.pipeline import (
    TemplateBank,
    evaluate_part,
    headline,
    train_on_part,
    whole_documents,
)

DEMO_ROWS = 6000
DEMO_JOBS = 2
DEMO_NOTES = """
Template-kNN baseline on 6,000 reactions of Schneider 50k taken patent by patent (cleaned, then
split with the shipped `schneider_random` and `schneider_document` definitions, seed 0). The
paper's ordering should show: reactions from patents seen in training (`random test`,
`document test`) are predicted better than reactions from new patents (`document test_ood`;
compare the top-1 accuracies in the table below), and the new-patent reactions lie further from the
training reactions (larger median distances). Absolute numbers are those of a small training
set; docs/reaction-ood.md has the full Schneider 50k table.
"""


def run_demo(out_dir: Path) -> list[Result]:
    """Run the demo into ``out_dir``; returns the evaluation and shift results."""
    import time

    from chemassay.suites.reaction_ood.api import clean_reactions, load_dataset, split_setting
    from chemassay.suites.reaction_ood.plots import plot_shift_histograms, plot_split_bars
    from chemassay.suites.reaction_ood.shift import (
        ShiftConfig,
        ShiftResult,
        distribution_shift,
        shift_result,
    )
    from chemassay.suites.reaction_ood.splits import make_split, split_definition
    from chemassay.suites.reaction_ood.template_knn import BaselineConfig

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = whole_documents(load_dataset("schneider-50k"), DEMO_ROWS, seed=0)
    clean, report = clean_reactions(raw)
    info(f"[reaction-ood] cleaned {report.rows_in} reactions to {report.rows_out}")
    dataset = "schneider-50k"
    sample = f"{len(raw)} reactions of whole patents (seed 0), cleaned to {len(clean)}"
    bank = TemplateBank(maps="schneider")
    config = BaselineConfig()
    results: list[Result] = []
    evaluated: dict[str, Result] = {}
    shift_sets: dict[str, dict] = {}
    for name in ("schneider_random", "schneider_document"):
        definition = split_definition(name)
        kind = definition["kind"]
        settings = {k: v for k, v in definition.items() if k not in ("kind", "name", "description", "seed")}
        parts = make_split(clean, kind, settings, seed=definition.get("seed", 0))
        model = train_on_part(parts["train"], bank, config=config, n_jobs=DEMO_JOBS)
        info(f"[reaction-ood] {kind}: trained on {len(parts['train'])} reactions "
             f"({model.training_report['n_templates']} templates)")
        wanted = ["test"] + (["test_ood"] if "test_ood" in parts else [])
        for part in wanted:
            label = f"{kind} {part}"
            result = evaluate_part(model, parts[part], label=label, dataset=dataset, n_jobs=DEMO_JOBS,
                                   setting=split_setting(kind, settings, part),
                                   extra_config={"split_definition": name, "seed": definition.get("seed", 0),
                                                 "sample": sample})
            result.write(out_dir / f"{kind}_{part}.json")
            results.append(result)
            evaluated[label] = result
            info(f"[reaction-ood] {label}: {headline(result)}")
        shift_sets[kind] = (parts["train"], {f"{kind} {p}": parts[p] for p in wanted})

    plot_split_bars(evaluated, out_dir / "accuracy_by_split.png",
                    title="Template-kNN baseline on Schneider 50k (demo subset)")

    started = time.perf_counter()
    distances: dict[str, dict] = {}
    summaries: dict[str, dict] = {}
    problems: dict[str, list] = {}
    shift_config = ShiftConfig()
    for _kind, (train, tests) in shift_sets.items():
        train_maps = [bank.mapped.get(k) or r for k, r in zip(train["source_rxn_smiles"], train["rxn_smiles"], strict=True)]
        test_sets = {}
        for label, frame in tests.items():
            bank.add(frame)
            test_sets[label] = [bank.mapped.get(k) or r for k, r in zip(frame["source_rxn_smiles"], frame["rxn_smiles"], strict=True)]
        shift = distribution_shift(train_maps, test_sets, config=shift_config, n_jobs=DEMO_JOBS)
        distances.update(shift.distances)
        summaries.update(shift.summaries)
        problems.update({name: entries for name, entries in shift.problems.items() if name != "train"})
    plot_shift_histograms(distances, out_dir / "shift_histograms.png", k=shift_config.k)
    combined = ShiftResult(distances, summaries, problems)
    shift_outcome = shift_result(
        combined, config=shift_config, dataset=DatasetRef(name=dataset), started=started,
        extra_config={"maps": "schneider", "training_set": "the train part of each split", "sample": sample},
    )
    shift_outcome.write(out_dir / "shift.json")
    results.append(shift_outcome)
    return results
