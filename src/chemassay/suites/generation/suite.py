"""The ``generation`` suite's declaration in the suite registry (imports nothing heavy)."""

from chemassay.suites import Suite

SUITE = Suite(
    name="generation",
    module="chemassay.suites.generation",
    title="does a generator learn the distribution of drug-like molecules?",
    reproduces="MOSES (Polykovskiy et al. 2020)",
    protocols=("generator",),
    api="chemassay.suites.generation.api",
    model_protocols="chemassay.suites.generation.protocol:PROTOCOLS",
    cli="chemassay.suites.generation.cli:app",
    metric_cards="chemassay.suites.generation.metrics:METRIC_CARDS",
    model_kinds="chemassay.suites.generation.baselines:MODEL_KINDS",
    datasets="chemassay.suites.generation.datasets:DATASETS",
    dataset_names=("moses",),
    assay="chemassay.suites.generation.assay:ASSAY",
    leakage="chemassay.suites.generation.leakage:leakage_sets",
    published="chemassay.suites.generation.published:PUBLISHED",
    details={"evaluate": "chemassay.suites.generation.details:EvaluateDetails",
             "filter": "chemassay.suites.generation.details:FilterDetails",
             "split": "chemassay.suites.generation.details:SplitDetails"},
    charts="chemassay.suites.generation.report:generation_charts",
    paper_table="chemassay.suites.generation.report:PAPER_TABLE",
    demo_notes="chemassay.suites.generation.assay:DEMO_NOTES",
)
