"""The datasets the stoichiometry suite owns: USPTO-15K (bundled) and USPTO-MIT.

USPTO-MIT is too large to ship (about 480,000 reactions); it is registered by its official
URL for users with internet. The publisher gives no checksum and it could not be downloaded
where this entry was written, so its sha256 is left empty: the registry pins the hash of the
first copy it obtains and reports the file as ``unverified`` (see ``chemassay.data.registry``).
"""

from __future__ import annotations

from chemassay.data.registry import (
    BundledSource,
    DataFile,
    DatasetSpec,
    LocalDirSource,
    UrlSource,
)

PACKAGE = "chemassay.suites.stoichiometry"
"""The package whose ``data/bundled/`` folder holds the files this suite ships."""

DATASETS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="uspto-15k",
        description=(
            "USPTO-15K: 15,000 atom-mapped USPTO reactions with reaction edits "
            "(train/valid/test 10,500/1,500/3,000), the Jin et al. NIPS 2017 split."
        ),
        license="MIT (Copyright (c) 2017 Jin, Coley, Barzilay, Jaakkola, Jensen; wengong-jin/nips17-rexgen)",
        citation=(
            "Coley et al., Prediction of Organic Reaction Outcomes Using Machine Learning, ACS Cent. Sci. "
            "3, 434 (2017); Jin et al., Predicting Organic Reaction Outcomes with Weisfeiler-Lehman "
            "Network, NIPS 2017."
        ),
        files=(
            DataFile("train.txt.gz", "7984d56bbebffbdf7cee22873ba877ff35535f774c46e0e7407c951256285dac", 860065),
            DataFile("valid.txt.gz", "831879643a978afe0903c2467035b635ebfe7388f9b5b3c0165f268a09b42615", 122169),
            DataFile("test.txt.gz", "147c7b7974abb426384657b8ca6ca340d33dade33eeec6d6d7c51685c3f51944", 247752),
        ),
        sources=(BundledSource("data/bundled/uspto15k", PACKAGE),),
        suites=("stoichiometry", "reaction-ood"),
        aliases=("uspto15k",),
        loader="chemassay.suites.stoichiometry.data:load_uspto",
        parts=("train", "valid", "test"),
    ),
    DatasetSpec(
        name="uspto-mit",
        description=(
            "USPTO-MIT (USPTO-480K): atom-mapped USPTO reactions with reaction edits, train/valid/test "
            "409,035/30,000/40,000, the Jin et al. NIPS 2017 split used by ChemAlgebra. One zip "
            "(data.zip, members data/train.txt, data/valid.txt, data/test.txt; each line "
            "'reaction_smiles edits'). No published sha256: unverified, pinned on first download."
        ),
        license="MIT (Copyright (c) 2017 Jin, Coley, Barzilay, Jaakkola, Jensen; wengong-jin/nips17-rexgen)",
        citation=(
            "Jin, Coley, Barzilay, Jaakkola, Predicting Organic Reaction Outcomes with Weisfeiler-Lehman "
            "Network, NIPS 2017; reactions from Lowe, Extraction of chemical structures and reactions "
            "from the literature, PhD thesis, University of Cambridge (2012)."
        ),
        files=(DataFile("data.zip", ""),),
        sources=(
            LocalDirSource("$CHEMASSAY_DATA/uspto-mit"),
            UrlSource("https://github.com/wengong-jin/nips17-rexgen/raw/master/USPTO/"),
        ),
        suites=("stoichiometry",),
        aliases=("uspto-480k",),
        loader="chemassay.suites.stoichiometry.data:load_uspto",
        parts=("train", "valid", "test"),
    ),
)
