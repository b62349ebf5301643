"""Datasets registered for the stoichiometry suite (imported at the end of ``catalog``).

USPTO-MIT is too large to ship (about 480,000 reactions); it is registered by its official
URL for users with internet. The publisher gives no checksum and it could not be downloaded
where this entry was written, so its sha256 is left empty: the registry pins the hash of the
first copy it obtains and reports the file as ``unverified`` (see ``chemassay.data.registry``).
"""

from __future__ import annotations

from chemassay.data.registry import DataFile, DatasetSpec, LocalDirSource, UrlSource, register

register(
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
    )
)
