"""The mechanism suite's metrics: oMeS (:mod:`.oms`, per reaction) aggregated by
:mod:`.scoring`, and the metric cards of every key its results carry.

``evaluate`` results carry the four oMeS means (per-reaction values in ``item_scores``, so
they get bootstrap intervals) and counts of how the gold reactions were scored; ``verify``
results carry counts of a checked file's records and problems. The module imports nothing
heavy (``chemassay metrics list`` reads the cards without RDKit).
"""

from __future__ import annotations

from chemassay.report.cards import MetricCard

SUITE = "mechanism"
_TABLES = "Tables 3, 14, 15, 16"
_COUNT = "a count, not a mean over reactions"
_ORACLE = ("gold-oracle", "it predicts the gold mechanism itself (a check of the scorer and the data)")
_PRODUCT = ("nearest-neighbour", "every predicted intermediate is the query's own first product, a valid molecule")

METRIC_CARDS: list[MetricCard] = [
    MetricCard(
        "S_total", SUITE,
        "mean over gold reactions of the exact-match credit: the weights of gold steps aligned (weighted "
        "Needleman-Wunsch on step subtypes) to a predicted step of the same subtype whose intermediate has "
        "the same canonical SMILES, over the reaction's total weight",
        "higher", (0.0, 1.0), paper_name="S_tot (%)", paper_table=_TABLES, interval="bootstrap", short="S_total",
        by_construction=(_ORACLE,),
    ),
    MetricCard(
        "S_partial", SUITE,
        "mean over gold reactions of the partial credit: like S_total, but an aligned step earns its weight "
        "times the Morgan-fingerprint Tanimoto of the two intermediates when it is at least tau (0.6)",
        "higher", (0.0, 1.0), paper_name="S_part (%)", paper_table=_TABLES, interval="bootstrap", short="S_partial",
        by_construction=(_ORACLE,),
    ),
    MetricCard(
        "V", SUITE,
        "validity: mean over gold reactions of the share of predicted intermediates RDKit parses into a "
        "non-empty molecule (0 for a reaction without prediction or with an unparseable one)",
        "higher", (0.0, 1.0), paper_name="V (%)", paper_table=_TABLES, interval="bootstrap",
        by_construction=(_ORACLE, _PRODUCT),
    ),
    MetricCard(
        "L", SUITE,
        "logic: mean over gold reactions of the share of gold steps aligned to a predicted step of the same "
        "subtype (the step sequence is right, whatever the intermediates)",
        "higher", (0.0, 1.0), paper_name="L (%)", paper_table=_TABLES, interval="bootstrap",
        by_construction=(_ORACLE,),
    ),
    MetricCard("n_scored", SUITE, "gold reactions with a parsed prediction", "none", (0.0, None),
               interval_note=_COUNT),
    MetricCard("n_missing", SUITE, "gold reactions without any prediction (scored as empty mechanisms, 0)",
               "lower", (0.0, None), interval_note=_COUNT),
    MetricCard("n_unparsed", SUITE,
               "gold reactions whose prediction could not be parsed or whose request failed (scored 0)",
               "lower", (0.0, None), interval_note=_COUNT),
    MetricCard("exact_mechanisms", SUITE, "gold reactions predicted perfectly (S_total = 1)", "higher",
               (0.0, None), interval_note=_COUNT),
    MetricCard("n_in_domain", SUITE,
               "gold reactions whose family (named reaction) the domain pool holds: the training set or exemplar "
               "pool of the run, else oMe-Template (the paper's in-domain, Table 16)", "none", (0.0, None),
               paper_table="Table 16", interval_note=_COUNT),
    MetricCard("n_out_of_domain", SUITE, "gold reactions whose family the domain pool does not hold (Table 16)",
               "none", (0.0, None), paper_table="Table 16", interval_note=_COUNT),
    *[
        MetricCard(
            f"{domain}/{metric}", SUITE,
            f"{metric} over the {label} gold reactions only (family {seen} the training / exemplar pool; the "
            "paper's Table 16 split)",
            "higher", (0.0, 1.0), paper_name=f"{paper} ({title})", paper_table="Table 16", interval="bootstrap",
            short=f"{metric} {title}", by_construction=(_ORACLE, _PRODUCT) if metric == "V" else (_ORACLE,),
        )
        for domain, label, seen, title in (("in-domain", "in-domain", "seen in", "in-domain"),
                                           ("out-of-domain", "out-of-domain", "not seen in", "out-of-domain"))
        for metric, paper in (("S_total", "S_tot (%)"), ("S_partial", "S_part (%)"), ("V", "V (%)"), ("L", "L (%)"))
    ],
    *[
        MetricCard(f"error/{category}", SUITE, f"error events: {text} (the paper's error taxonomy, Fig. 6 / "
                   "Table 8; shares and examples under the result's error_taxonomy)", "lower", (0.0, None),
                   paper_table="Fig. 6, Table 8", interval_note=_COUNT)
        for category, text in (
            ("invalid_smiles", "predicted intermediates RDKit cannot read (or none given)"),
            ("inconsistent_smiles", "valid intermediates holding an element found in none of the reaction's "
                                    "molecules"),
            ("unparsed_answer", "answers from which no step list could be read (empty, truncated beyond repair, "
                                "another format): scored 0"),
            ("repaired_answer", "answers read only after repairing their JSON (lenient parsing)"),
            ("unknown_label", "predicted steps whose subtype is missing or outside the taxonomy"),
            ("no_answer", "gold reactions without prediction or whose request failed"),
            ("valence_charge", "intermediates violating valence, or with a charge of 2 or more on C, N, O or a "
                               "halogen"),
            ("wrong_intermediate", "steps of the right subtype whose valid intermediate is not the gold one"),
            ("skipped_critical_step", "gold steps weighted above the reaction's mean that no predicted step is "
                                      "aligned to"),
            ("skipped_step", "other gold steps no predicted step is aligned to"),
            ("wrong_step_type", "predicted steps aligned to a gold step of another subtype"),
            ("extra_step", "predicted steps aligned to no gold step"),
        )
    ],
    MetricCard("reactions", SUITE, "records checked by verify (objects read from the file)", "none", (0.0, None),
               interval_note=_COUNT),
    MetricCard("steps", SUITE, "mechanism steps in the records checked by verify", "none", (0.0, None),
               interval_note=_COUNT),
    MetricCard("errors", SUITE, "problems of severity 'error' found by verify (exit code 1 when any)", "lower",
               (0.0, None), interval_note=_COUNT),
    MetricCard("warnings", SUITE, "problems of severity 'warning' found by verify", "lower", (0.0, None),
               interval_note=_COUNT),
    MetricCard("problems.{kind}", SUITE,
               "problems of one kind found by verify (malformed, missing_field, duplicate_id, invalid_smiles, "
               "unknown_type, unknown_subtype, type_mismatch, step_numbering, step_count, weight_invalid, "
               "weights_partial, weights_sum, unknown_level)",
               "lower", (0.0, None), interval_note=_COUNT),
]
