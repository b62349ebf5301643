"""Metric cards of the robustness suite: every key its results can carry.

Retrieval (``evaluate``): ``<direction>_<metric>`` for one pair of embedding sets, with
``<augmentation>/`` in front when a model is run over a dataset's augmentations, and
``layer<L>/`` before the direction when every hidden layer is scored. ``o2a``: the originals
query the augmented set; ``a2o``: the augmented molecules query the originals. The metrics
themselves are :func:`chemassay.report.ranking.rank_summary` of the true match's rank
(:mod:`.retrieval` computes the ranks exactly, ties by row index as FAISS does).

Downstream (``downstream``): ``<augmentation>/rmse`` (regression) or ``accuracy`` /
``roc_auc`` (classification), their ``_drop`` against the original test set, and the string
statistics of each augmentation. Training (``train``): the validation masked-LM metrics.
"""

from __future__ import annotations

from chemassay.report.cards import MetricCard

SUITE = "robustness"

_DIRECTIONS = {
    "o2a": ("original→augmented", "Table 1 (ChEBI-20), Table 2 (isomers)"),
    "a2o": ("augmented→original", "Table 5"),
}
_PREFIXES = {
    "": "",
    "layer{n}/": " of hidden layer n (0 = the embedding layer)",
    "{augmentation}/": " for one augmentation",
    "{augmentation}/layer{n}/": " for one augmentation and hidden layer n (0 = the embedding layer)",
}
_NOT_A_MEAN = "not a mean over molecules"
INVARIANT = (("fingerprint", "Morgan fingerprints are computed from the molecular graph, the same for every "
                             "rewrite: retrieval fails only between molecules with equal fingerprints"),)
"""Encoders whose retrieval scores are fixed by construction (:attr:`MetricCard.by_construction`)."""


def _retrieval_cards() -> list[MetricCard]:
    cards = []
    for prefix, where in _PREFIXES.items():
        for direction, (words, table) in _DIRECTIONS.items():
            base = f"{prefix}{direction}_"
            cards += [
                MetricCard(
                    key=base + "acc@{k}", suite=SUITE, direction="higher", range=(0.0, 1.0),
                    description=(f"{words} retrieval{where}: share of molecules whose own rewritten form "
                                 f"is among the k nearest embeddings"),
                    paper_name="Acc@k", paper_table=table, interval="wilson", short=f"{direction} Acc@k", by_construction=INVARIANT,
                ),
                MetricCard(
                    key=base + "mrr", suite=SUITE, direction="higher", range=(0.0, 1.0),
                    description=f"{words} retrieval{where}: mean reciprocal rank of the true match",
                    paper_name="MRR", paper_table=table, interval="bootstrap", short=f"{direction} MRR", by_construction=INVARIANT,
                ),
                MetricCard(
                    key=base + "mean_rank", suite=SUITE, direction="lower", range=(1.0, None),
                    description=f"{words} retrieval{where}: mean 1-based rank of the true match",
                    interval="bootstrap", short=f"{direction} mean rank", by_construction=INVARIANT,
                ),
                MetricCard(
                    key=base + "median_rank", suite=SUITE, direction="lower", range=(1.0, None),
                    description=f"{words} retrieval{where}: median 1-based rank of the true match",
                    interval="none", interval_note="a median, " + _NOT_A_MEAN, short=f"{direction} median rank", by_construction=INVARIANT,
                ),
                MetricCard(
                    key=base + "tied_queries", suite=SUITE, direction="none", range=(0.0, None),
                    description=(f"{words} retrieval{where}: number of queries whose true match is at exactly "
                                 "the same distance as another candidate (ranked by the tie policy)"),
                    interval="none", interval_note="a count", short=f"{direction} ties",
                ),
            ]
    return cards


def _downstream_cards() -> list[MetricCard]:
    cards = []
    for prefix, where in (("original/", "on the original test set"), ("{augmentation}/", "on an augmented test set")):
        cards += [
            MetricCard(
                key=prefix + "rmse", suite=SUITE, direction="lower", range=(0.0, None),
                description=f"property model {where}: root-mean-square error (mean over targets)",
                paper_name="RMSE", paper_table="Tables 12-20", interval="none",
                interval_note="a root of a mean, " + _NOT_A_MEAN,
            ),
            MetricCard(
                key=prefix + "accuracy", suite=SUITE, direction="higher", range=(0.0, 1.0),
                description=f"property model {where}: share of right class predictions (mean over targets)",
                paper_name="accuracy", paper_table="Tables 12-20", interval="bootstrap",
            ),
            MetricCard(
                key=prefix + "roc_auc", suite=SUITE, direction="higher", range=(0.0, 1.0),
                description=f"property model {where}: ROC-AUC (one-vs-rest macro for several classes; mean over targets)",
                interval="none", interval_note="a ranking statistic over pairs, " + _NOT_A_MEAN,
            ),
        ]
    drops = {
        "rmse_drop": ("lower", "RMSE on the augmented set minus RMSE on the original set (same molecules)"),
        "accuracy_drop": ("lower", "accuracy on the original set minus accuracy on the augmented set"),
        "roc_auc_drop": ("lower", "ROC-AUC on the original set minus ROC-AUC on the augmented set"),
    }
    cards.append(MetricCard(
        key="{augmentation}/mse_drop", suite=SUITE, direction="lower", range=(None, None),
        description=("mean over test molecules of the change of the squared error (augmented minus original, "
                     "mean over targets): the paired MSE drop, with a bootstrap interval over molecules"),
        interval="bootstrap",
    ))
    for key, (direction, description) in drops.items():
        cards.append(MetricCard(
            key="{augmentation}/" + key, suite=SUITE, direction=direction, range=(None, None),
            description=f"robustness of the property model: {description} (0 = unaffected)",
            interval="none", interval_note="a difference of two metrics",
        ))
    cards += [
        MetricCard(
            key="{augmentation}/mean_length", suite=SUITE, direction="none", range=(0.0, None),
            description="mean length (characters) of the augmented test SMILES", paper_name="SMILES length",
            paper_table="Table 11", interval="none", interval_note="descriptive statistic of the input",
        ),
        MetricCard(
            key="{augmentation}/levenshtein_ratio", suite=SUITE, direction="none", range=(0.0, None),
            description=("mean Levenshtein ratio of each augmented SMILES to its original as the AMORE paper defines "
                         "it: edit distance / length of the original (0 = unchanged; unbounded, ~1.5 for explicit H)"),
            paper_name="Levenshtein ratio", paper_table="Table 11", interval="none",
            interval_note="descriptive statistic of the input",
        ),
        MetricCard(
            key="{augmentation}/normalized_similarity", suite=SUITE, direction="none", range=(0.0, 1.0),
            description=("mean normalized Levenshtein similarity (rapidfuzz): 1 - edit distance / length of the "
                         "longer string (1 = unchanged); not the paper's ratio"),
            interval="none", interval_note="descriptive statistic of the input",
        ),
        MetricCard(
            key="{augmentation}/spearman_levenshtein_vs_error_change", suite=SUITE, direction="none", range=(-1.0, 1.0),
            description=("Spearman correlation between a molecule's Levenshtein ratio to its original (the paper's) "
                         "and the change of its error (positive: the more the string changed, the more the error grew)"),
            paper_name="Spearman ρ", paper_table="Table 11", interval="none", interval_note="a rank correlation",
        ),
    ]
    return cards


def _training_cards() -> list[MetricCard]:
    note = "one validation set; rerun with other seeds for spread"
    return [
        MetricCard(key="mlm_loss", suite=SUITE, direction="lower", range=(0.0, None),
                   description="masked-language-model cross-entropy on held-out SMILES (validation)",
                   interval="none", interval_note=note),
        MetricCard(key="perplexity", suite=SUITE, direction="lower", range=(1.0, None),
                   description="exp(mlm_loss) on held-out SMILES (validation)", interval="none", interval_note=note),
        MetricCard(key="masked_accuracy", suite=SUITE, direction="higher", range=(0.0, 1.0),
                   description="share of masked tokens predicted exactly (validation)", interval="none",
                   interval_note=note),
        MetricCard(key="clm_loss", suite=SUITE, direction="lower", range=(0.0, None),
                   description="causal (next-token) language-model cross-entropy on held-out SMILES (decoder family)",
                   interval="none", interval_note=note),
        MetricCard(key="next_token_accuracy", suite=SUITE, direction="higher", range=(0.0, 1.0),
                   description="share of next tokens predicted exactly on held-out SMILES (decoder family)",
                   interval="none", interval_note=note),
        MetricCard(key="denoising_loss", suite=SUITE, direction="lower", range=(0.0, None),
                   description="cross-entropy of rebuilding held-out SMILES from their span-masked form "
                               "(encoder-decoder family)", interval="none", interval_note=note),
        MetricCard(key="reconstruction_accuracy", suite=SUITE, direction="higher", range=(0.0, 1.0),
                   description="share of tokens of held-out SMILES rebuilt exactly from the span-masked form "
                               "(encoder-decoder family, teacher forcing)", interval="none", interval_note=note),
        MetricCard(key="valid_rmse", suite=SUITE, direction="lower", range=(0.0, None),
                   description="graph network: RMSE of the trained property on the held-out part of the training split",
                   interval="none", interval_note="a root of a mean, " + _NOT_A_MEAN),
        MetricCard(key="train_loss_first", suite=SUITE, direction="none", range=(0.0, None),
                   description="mean training loss of the first epoch", interval="none",
                   interval_note="a training curve summary"),
        MetricCard(key="train_loss_last", suite=SUITE, direction="lower", range=(0.0, None),
                   description="mean training loss of the last epoch", interval="none",
                   interval_note="a training curve summary"),
    ]


def _caption_cards() -> list[MetricCard]:
    cards = []
    for key, name, meaning in (("rouge1", "ROUGE-1", "unigram"), ("rouge2", "ROUGE-2", "bigram"),
                               ("rougeL", "ROUGE-L", "longest-common-subsequence")):
        cards.append(MetricCard(
            key="{augmentation}/" + key, suite=SUITE, direction="higher", range=(0.0, 1.0),
            description=f"captioning: mean {meaning} F-measure (rouge-score) of the captions of one rewrite against the gold captions",
            paper_name=name, paper_table="Table 3" if key == "rouge2" else "Table 11", interval="bootstrap",
        ))
    cards.append(MetricCard(
        key="{augmentation}/meteor", suite=SUITE, direction="higher", range=(0.0, 1.0),
        description="captioning: mean METEOR (nltk, WordNet 3.0 synonyms) of the captions of one rewrite",
        paper_name="METEOR", paper_table="Table 3", interval="bootstrap",
    ))
    for key in ("rouge2", "meteor"):
        cards.append(MetricCard(
            key="{augmentation}/spearman_acc1_vs_" + key, suite=SUITE, direction="none", range=(-1.0, 1.0),
            description=f"Spearman correlation over molecules between retrieval success (o2a Acc@1) and caption {key}",
            paper_name="correlation of Acc@1 and ROUGE/METEOR", paper_table="Table 3 (text)", interval="none",
            interval_note="a rank correlation",
        ))
    for key in ("rouge1", "meteor"):
        cards.append(MetricCard(
            key="{augmentation}/spearman_levenshtein_vs_" + key, suite=SUITE, direction="none", range=(-1.0, 1.0),
            description=f"Spearman correlation over molecules between the Levenshtein ratio (paper's) and caption {key}",
            paper_name=f"ρ(Levenshtein ratio, {key})", paper_table="Table 11", interval="none",
            interval_note="a rank correlation",
        ))
    return cards


METRIC_CARDS: list[MetricCard] = _retrieval_cards() + _downstream_cards() + _training_cards() + _caption_cards()
"""Every metric key of the robustness suite's results."""
