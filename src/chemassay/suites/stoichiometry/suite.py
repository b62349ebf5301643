"""The ``stoichiometry`` suite's declaration in the suite registry (imports nothing heavy)."""

from chemassay.suites import Suite

SUITE = Suite(
    name="stoichiometry",
    module="chemassay.suites.stoichiometry",
    title="does a reaction predictor conserve mass and get the coefficients right?",
    reproduces="ChemAlgebra (Valenti et al. 2022)",
    protocols=("bag-predictor", "reaction-predictor"),
    api="chemassay.suites.stoichiometry.api",
    model_protocols="chemassay.suites.stoichiometry.protocol:PROTOCOLS",
    cli="chemassay.suites.stoichiometry.cli:app",
    metric_cards="chemassay.suites.stoichiometry.metrics:METRIC_CARDS",
    model_kinds="chemassay.suites.stoichiometry.baselines:MODEL_KINDS",
    datasets="chemassay.suites.stoichiometry.datasets:DATASETS",
    dataset_names=("uspto-15k", "uspto-mit"),
    assay="chemassay.suites.stoichiometry.assay:ASSAY",
    leakage="chemassay.suites.stoichiometry.leakage:leakage_sets",
    published="chemassay.suites.stoichiometry.published:PUBLISHED",
    details={
        "evaluate": "chemassay.suites.stoichiometry.details:EvaluateDetails",
        "balance": "chemassay.suites.stoichiometry.details:BalanceDetails",
        "build": "chemassay.suites.stoichiometry.details:BuildDetails",
    },
    gallery="chemassay.suites.stoichiometry.report:stoichiometry_gallery",
    charts="chemassay.suites.stoichiometry.report:stoichiometry_charts",
    paper_table="chemassay.suites.stoichiometry.report:PAPER_TABLE",
    demo_notes="chemassay.suites.stoichiometry.assay:DEMO_NOTES",
)
