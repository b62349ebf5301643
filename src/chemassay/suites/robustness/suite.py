"""The ``robustness`` suite's declaration in the suite registry (imports nothing heavy)."""

from chemassay.suites import Suite

SUITE = Suite(
    name="robustness",
    module="chemassay.suites.robustness",
    title="does a chemical language model recognise the same molecule written another way?",
    reproduces="AMORE (Ganeeva et al. 2024)",
    protocols=("encoder", "property-predictor"),
    api="chemassay.suites.robustness.api",
    model_protocols="chemassay.suites.robustness.protocol:PROTOCOLS",
    cli="chemassay.suites.robustness.cli:app",
    metric_cards="chemassay.suites.robustness.metrics:METRIC_CARDS",
    model_kinds="chemassay.suites.robustness.baselines:MODEL_KINDS",
    datasets="chemassay.suites.robustness.datasets:DATASETS",
    dataset_names=("amore-chebi20", "amore-isomers", "solubility-huuskonen", "moses"),
    published="chemassay.suites.robustness.published:PUBLISHED",
    assay="chemassay.suites.robustness.assay:ASSAY",
    leakage="chemassay.suites.robustness.leakage:leakage_sets",
    details={
        "evaluate": "chemassay.suites.robustness.details:EvaluateDetails",
        "downstream": "chemassay.suites.robustness.details:DownstreamDetails",
        "train": "chemassay.suites.robustness.details:TrainDetails",
        "captions": "chemassay.suites.robustness.details:CaptionsDetails",
    },
    gallery="chemassay.suites.robustness.report:robustness_gallery",
    charts="chemassay.suites.robustness.report:robustness_charts",
    paper_table="chemassay.suites.robustness.report:PAPER_TABLE",
    demo_notes="chemassay.suites.robustness.assay:DEMO_NOTES",
)
