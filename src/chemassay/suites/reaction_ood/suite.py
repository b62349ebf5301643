"""The ``reaction-ood`` suite's declaration in the suite registry (imports nothing heavy)."""

from chemassay.suites import Suite

SUITE = Suite(
    name="reaction-ood",
    module="chemassay.suites.reaction_ood",
    title="does a reaction predictor generalize to new documents, authors, years and reaction types?",
    reproduces="Bradshaw et al. (Challenging reaction prediction models to generalize to novel chemistry)",
    protocols=("reaction-predictor",),
    api="chemassay.suites.reaction_ood.api",
    model_protocols="chemassay.suites.reaction_ood.protocol:PROTOCOLS",
    cli="chemassay.suites.reaction_ood.cli:app",
    metric_cards="chemassay.suites.reaction_ood.metrics:METRIC_CARDS",
    model_kinds="chemassay.suites.reaction_ood.baselines:MODEL_KINDS",
    datasets="chemassay.suites.reaction_ood.datasets:DATASETS",
    dataset_names=("schneider-50k", "schneider-dataseta", "uspto-15k"),
    published="chemassay.suites.reaction_ood.published:PUBLISHED",
    assay="chemassay.suites.reaction_ood.assay:ASSAY",
    leakage="chemassay.suites.reaction_ood.leakage:leakage_sets",
    details={
        "evaluate": "chemassay.suites.reaction_ood.details:EvaluateDetails",
        "iterate": "chemassay.suites.reaction_ood.details:IterateDetails",
        "clean": "chemassay.suites.reaction_ood.details:CleanDetails",
        "verify": "chemassay.suites.reaction_ood.details:VerifyDetails",
        "shift": "chemassay.suites.reaction_ood.details:ShiftDetails",
    },
    gallery="chemassay.suites.reaction_ood.report:reaction_ood_gallery",
    charts="chemassay.suites.reaction_ood.report:reaction_ood_charts",
    paper_table="chemassay.suites.reaction_ood.report:PAPER_TABLE",
    demo_notes="chemassay.suites.reaction_ood.assay:DEMO_NOTES",
)
