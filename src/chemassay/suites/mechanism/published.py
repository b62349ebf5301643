"""How oMeBench's published tables meet the mechanism suite's metric keys."""

from __future__ import annotations

from typing import Any

from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped

OMEBENCH_KEYS = {"V": "V", "L": "L", "S_tot": "S_total", "S_part": "S_partial"}
#: A difficulty level's (or domain's) value of a metric; ``overall`` is the plain key.
OMEBENCH_LEVEL_KEY = "{level}/{key}"


def metric_key(metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for an oMeBench column (a level other than overall prefixes the key)."""
    key = OMEBENCH_KEYS.get(metric)
    if key is None:
        return None
    level = setting.get("level", "overall")
    if level == "overall":
        return Mapped(key, ("level",))
    return Mapped(OMEBENCH_LEVEL_KEY.format(level=level, key=key), ("level",))


PUBLISHED = PaperBinding(paper="omebench", resource=("chemassay.suites.mechanism", "published.json"),
                         metric_key=metric_key)
