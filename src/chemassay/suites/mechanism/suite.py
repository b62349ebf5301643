"""The ``mechanism`` suite's declaration in the suite registry (imports nothing heavy)."""

from chemassay.suites import Suite

SUITE = Suite(
    name="mechanism",
    module="chemassay.suites.mechanism",
    title="can a model reason through a multi-step organic mechanism?",
    reproduces="oMeBench / oMeS (Xu et al. 2025)",
    protocols=("mechanism-predictor",),
    api="chemassay.suites.mechanism.api",
    model_protocols="chemassay.suites.mechanism.protocol:PROTOCOLS",
    cli="chemassay.suites.mechanism.cli:app",
    metric_cards="chemassay.suites.mechanism.metrics:METRIC_CARDS",
    model_kinds="chemassay.suites.mechanism.baselines:MODEL_KINDS",
    datasets="chemassay.suites.mechanism.datasets:DATASETS",
    dataset_names=("omebench",),
    assay="chemassay.suites.mechanism.assay:ASSAY",
    leakage="chemassay.suites.mechanism.leakage:leakage_sets",
    published="chemassay.suites.mechanism.published:PUBLISHED",
    details={"evaluate": "chemassay.suites.mechanism.details:EvaluateDetails",
             "verify": "chemassay.suites.mechanism.details:VerifyDetails"},
    gallery="chemassay.suites.mechanism.report:mechanism_gallery",
    charts="chemassay.suites.mechanism.report:mechanism_charts",
    paper_table="chemassay.suites.mechanism.report:PAPER_TABLE",
    demo_notes="chemassay.suites.mechanism.assay:DEMO_NOTES",
)
