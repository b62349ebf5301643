"""RDKit depictions (SVG) for the failure galleries, with atoms highlighted by element."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from html import escape

from rdkit import Chem
from rdkit.Chem.Draw import rdMolDraw2D

from chemassay.chem.molecules import rdkit_log_silenced

APPEAR = (0.86, 0.24, 0.24)
"""Highlight colour of atoms that appear from nowhere (red)."""
VANISH = (0.26, 0.48, 0.86)
"""Highlight colour of atoms that vanish (blue)."""


def _placeholder(text: str, width: int, height: int) -> str:
    """An SVG box with a message, for strings RDKit cannot draw."""
    shown = escape(text if len(text) <= 40 else text[:39] + "…")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f'<rect width="{width}" height="{height}" fill="#fafafa" stroke="#ccc"/>'
            f'<text x="{width / 2}" y="{height / 2 - 6}" text-anchor="middle" font-size="11" font-family="Helvetica, Arial, sans-serif" fill="#a33">cannot draw</text>'
            f'<text x="{width / 2}" y="{height / 2 + 10}" text-anchor="middle" font-size="10" font-family="monospace" fill="#555">{shown}</text></svg>')


@lru_cache(maxsize=4096)
def depict(smiles: str, highlight_elements: tuple[tuple[str, str], ...] = (), width: int = 240, height: int = 170) -> str:
    """SVG of a SMILES (one or several dot-separated molecules); atoms of the elements in
    ``highlight_elements`` (``(element, "appear"|"vanish")``) are highlighted. A string RDKit
    cannot parse gives a labelled placeholder, never an exception."""
    with rdkit_log_silenced():
        mol = Chem.MolFromSmiles(smiles) if smiles and len(smiles) < 2000 else None
    if mol is None or mol.GetNumAtoms() == 0 or mol.GetNumAtoms() > 250:
        return _placeholder(smiles or "(empty)", width, height)
    colours = {element: (APPEAR if kind == "appear" else VANISH) for element, kind in highlight_elements}
    atoms = [atom.GetIdx() for atom in mol.GetAtoms() if atom.GetSymbol() in colours]
    atom_colours = {idx: colours[mol.GetAtomWithIdx(idx).GetSymbol()] for idx in atoms}
    drawer = rdMolDraw2D.MolDraw2DSVG(width, height)
    options = drawer.drawOptions()
    options.clearBackground = True
    options.addStereoAnnotation = False
    try:
        rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol, highlightAtoms=atoms, highlightAtomColors=atom_colours,
                                           highlightBonds=[])
    except (RuntimeError, ValueError):
        return _placeholder(smiles, width, height)
    drawer.FinishDrawing()
    svg = drawer.GetDrawingText()
    # RDKit writes an XML declaration first; an <img> data URI does not need it.
    return svg[svg.index("<svg"):] if "<svg" in svg else svg


def element_changes(before: dict[str, int], after: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """``(appear, vanish)``: per element, how many more atoms ``after`` has than ``before``,
    and how many fewer (charge entries ignored)."""
    appear, vanish = {}, {}
    for element in set(before) | set(after):
        if element == "charge":
            continue
        delta = after.get(element, 0) - before.get(element, 0)
        if delta > 0:
            appear[element] = delta
        elif delta < 0:
            vanish[element] = -delta
    return dict(sorted(appear.items())), dict(sorted(vanish.items()))


def highlights(elements: Iterable[str], kind: str) -> tuple[tuple[str, str], ...]:
    """The ``highlight_elements`` argument of :func:`depict` for some elements."""
    return tuple(sorted((element, kind) for element in elements))


def _hex(colour: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(255 * c):02X}" for c in colour)


def formula_svg(bag_text: str, highlight_elements: tuple[tuple[str, str], ...] = ()) -> str:
    """SVG of a bag written as formulas (``{2}C10H9NO3.{4}H2``), one species per line, the
    element symbols of ``highlight_elements`` coloured as :func:`depict` colours atoms (red:
    appear, blue: vanish) and bold — the formula counterpart of a highlighted depiction."""
    colours = {element: _hex(APPEAR if kind == "appear" else VANISH) for element, kind in highlight_elements}
    species = [s for s in bag_text.split(".") if s] or [bag_text]
    lines = []
    width = 0
    for index, text in enumerate(species):
        y = 20 + 18 * index
        spans = []
        for coefficient, element, rest in re.findall(r"(\{\d+\})|([A-Z][a-z]?)|([^A-Z{]+)", text):
            token = coefficient or element or rest
            if element and element in colours:
                spans.append(f'<tspan fill="{colours[element]}" font-weight="bold">{escape(token)}</tspan>')
            elif coefficient:
                spans.append(f'<tspan fill="#5f6b7a">{escape(token)} </tspan>')
            else:
                spans.append(escape(token))
        lines.append(f'<text x="8" y="{y}" font-size="12" font-family="Menlo, Consolas, monospace">{"".join(spans)}</text>')
        width = max(width, int(7.6 * (len(text) + 1)) + 16)
    height = 18 * len(species) + 12
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f'<rect width="{width}" height="{height}" fill="white"/>{"".join(lines)}</svg>')
