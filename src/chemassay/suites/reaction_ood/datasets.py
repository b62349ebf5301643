"""The datasets the reaction-ood suite owns: the Schneider 50k patent reactions and RetroSim's
dataSetA (bundled, with atom maps).
"""

from __future__ import annotations

from chemassay.data.registry import (
    BundledSource,
    DataFile,
    DatasetSpec,
    UrlSource,
)

PACKAGE = "chemassay.suites.reaction_ood"
"""The package whose ``data/bundled/`` folder holds the files this suite ships."""

DATASETS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="schneider-50k",
        description=(
            "Schneider 50k: 50,000 USPTO reactions (Lowe extraction, US patents 1976-2013) with the "
            "patent number (document id, 20,771 patents) and a 3-level NameRxn class (50 x 1,000)."
        ),
        license="CC BY 4.0 (SynRXN) / MIT (rxn4chemistry/rxnfp); source data CC0 (Lowe USPTO extraction)",
        citation=(
            "Schneider, Lowe, Sayle, Landrum, Development of a Novel Fingerprint for Chemical Reactions "
            "and Its Application to Large-Scale Reaction Classification and Similarity, J. Chem. Inf. "
            "Model. 55, 39 (2015); Schwaller et al., Nat. Mach. Intell. 3, 144 (2021) (rxnfp); Phan et "
            "al., Sci. Data 13, 625 (2026) (SynRXN)."
        ),
        files=(
            DataFile("schneider50k.csv.gz", "1c693859952ffc4c209e9131f154ffaab9fcafcd4f76b2b8020e461d0a78d8e3", 1743955),
            DataFile("rxnclass2id.json", "95d5dca95d46fccfc1715032e9a16646553812447d5e8270de246968af5070bc", 645),
            DataFile("rxnclass2name.json", "370b0b2ffe362917d46dae33a11b39391d6913291df5e96ccdd5270553d93047", 2824),
        ),
        sources=(BundledSource("data/bundled/schneider50k", PACKAGE),),
        suites=("reaction-ood", "stoichiometry"),
        aliases=("schneider50k", "schneider"),
        loader="chemassay.suites.reaction_ood.data:load_reactions",
    ),
    DatasetSpec(
        name="schneider-dataseta",
        description=(
            "Schneider 'What's What' dataSetA via retrosim: 683 atom-mapped reactions with patent id "
            "and superclass 1-10."
        ),
        license="MIT (Copyright (c) 2017 Connor Coley; connorcoley/retrosim)",
        citation=(
            "Schneider, Stiefl, Landrum, What's What: The (Nearly) Definitive Guide to Reaction Role "
            "Assignment, J. Chem. Inf. Model. 56, 2336 (2016); Coley et al., ACS Cent. Sci. 3, 1237 (2017)."
        ),
        files=(
            DataFile("dataSetA.csv", "1cde03493cb9045ebe7dbc962fdd5bbaab31671d730dc1d6f06b2c5ee52509b8", 303418),
        ),
        sources=(
            BundledSource("data/bundled/retrosim_dataseta", PACKAGE),
            UrlSource(
                "https://raw.githubusercontent.com/connorcoley/retrosim/0a272f0b5de833c448f41491e81e4dc00b4d85b0/retrosim/data/from_schneider/"
            ),
        ),
        suites=("reaction-ood",),
        loader="chemassay.suites.reaction_ood.data:load_reactions",
    ),
)
