"""The five suites.

Each suite is a package with the same role files where the role exists: ``api`` (the
library entry points, re-exported as ``chemassay.<suite>``), ``cli`` (a Typer ``app``),
``data`` (its dataset loaders), ``metrics`` (its metric functions and ``METRIC_CARDS``),
``baselines`` (its built-in models and ``MODEL_KINDS``), ``demo`` (``run_demo(out_dir) ->
list[Result]``) and ``plots``. Suites import ``chem``, ``data``, ``models``, ``runtime`` and
``report``, never each other.
"""

SUITES: tuple[tuple[str, str], ...] = (
    ("stoichiometry", "stoichiometry"),
    ("reaction-ood", "reaction_ood"),
    ("generation", "generation"),
    ("robustness", "robustness"),
    ("mechanism", "mechanism"),
)
"""``(cli_name, module_name)`` of every suite, in the order the CLI and reports show them."""


def suite_module(name: str) -> str:
    """The module name of a suite given its CLI name or module name (``reaction-ood`` → ``reaction_ood``)."""
    for cli_name, module in SUITES:
        if name in (cli_name, module):
            return module
    raise KeyError(f"unknown suite {name!r}; suites: {', '.join(c for c, _ in SUITES)}")
