"""The five suites. Each is a package with a ``cli`` module (a Typer ``app``) and,
optionally, a ``demo`` module with ``run_demo(out_dir) -> list[Result]``. Suites import
``chem``, ``data``, ``models``, ``runtime`` and ``report``, never each other."""
