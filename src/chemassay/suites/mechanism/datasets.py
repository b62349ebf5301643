"""The datasets the mechanism suite owns: oMeBench (oMe-Gold and oMe-Template, bundled).
"""

from __future__ import annotations

from chemassay.data.registry import (
    BundledSource,
    DataFile,
    DatasetSpec,
    UrlSource,
)

PACKAGE = "chemassay.suites.mechanism"
"""The package whose ``data/bundled/`` folder holds the files this suite ships."""

DATASETS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="omebench",
        description=(
            "oMeBench: oMe-Gold (196 expert-verified reactions, 858 weighted mechanism steps) and "
            "oMe-Template (167 mechanism templates with R-group placeholders [*:i])."
        ),
        license="MIT (Copyright (c) 2025 SkylarZ; skylarkie/oMeBench)",
        citation=(
            "Xu, Zhang, Wang, Edwards, Ji. oMeBench: Towards Robust Benchmarking of LLMs in Organic "
            "Mechanism Elucidation and Reasoning. arXiv:2510.07731 (2025)."
        ),
        files=(
            DataFile("oMe_Gold.json", "978958bbf3f2ee9ab7cc433eec0117d14baf88a254ac85eed44febe80f84c16b", 249707),
            DataFile("oMe_Template.json", "615d69402f624286a283ebf69dedf1b2ccfffc9c8547abd7cae89d5d9802ea64", 408099),
            DataFile("LICENSE", "a4958d6da4e5312d3e8672a80c97fe7277adbd09b35dde1ef23e9b25eff3957a", 1064),
        ),
        sources=(
            BundledSource("data/bundled/omebench", PACKAGE),
            UrlSource(
                "https://raw.githubusercontent.com/skylarkie/oMeBench/4ecae92edef07c0b05429104012fc104e531eadf/data/"
            ),
        ),
        suites=("mechanism",),
        aliases=("ome",),
        loader="chemassay.suites.mechanism.data:load_omebench",
        parts=("gold", "templates"),
        part_aliases=(("gold", "gold"), ("ome-gold", "gold"), ("templates", "templates"), ("template", "templates"),
                      ("ome-template", "templates")),
    ),
)
