"""Allow ``python -m chemassay``."""

from chemassay.cli import main

if __name__ == "__main__":
    main()
