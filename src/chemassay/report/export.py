"""The papers' headline tables with the user's rows, ready to paste into a paper: LaTeX
(booktabs), Markdown (GitHub tables) and CSV (``chemassay report --format latex|markdown|csv``).

Each writer takes the :class:`~chemassay.report.paper_tables.PaperTable` of one suite: the
paper's rows as printed, the user's rows in the same unit and decimals with their 95 %
intervals, the paper's spanning headers (``in``/``cross``/``out``), a caption naming the
paper, the table, the unit and the data of both.

>>> from chemassay.report.paper_tables import PaperColumn, PaperTableSpec, build_paper_table
>>> from chemassay.contract.result import Result
>>> spec = PaperTableSpec(table="Table 2", title="filters and novelty", unit="fraction", digits=3,
...                       columns=(PaperColumn("Filters", "Filters"), PaperColumn("Novelty", "Novelty")))
>>> table = build_paper_table("generation", spec, [Result(suite="generation", task="evaluate",
...                           metrics={"Filters": 0.958, "Novelty": 0.97}, n=30000)], published=False)
>>> print(to_csv(table).splitlines()[0])
row,kind,Filters,Filters low,Filters high,Filters std,Novelty,Novelty low,Novelty high,Novelty std
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from chemassay.report.paper_tables import PaperTable, TableCell
from chemassay.runtime.files import atomic_write_text

FORMATS = ("html", "latex", "markdown", "csv")
SUFFIX = {"latex": ".tex", "markdown": ".md", "csv": ".csv"}

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_TEXT = {"±": r"$\pm$", "–": "--", "—": "---", "→": r"$\rightarrow$", "≤": r"$\leq$", "≥": r"$\geq$",
               "<": r"$<$", ">": r"$>$", "★": r"$\star$", "×": r"$\times$", "−": "-", "↑": r"$\uparrow$",
               "↓": r"$\downarrow$", "†": r"$^\dagger$", "…": r"\ldots{}", "'": "'", "é": r"\'e", "ö": r'\"o', "ü": r'\"u'}


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX's text mode (special characters escaped, a few symbols as math)."""
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_TEXT:
            out.append(_LATEX_TEXT[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")  # pdflatex without extra packages cannot set it
    return "".join(out)


def _caption(table: PaperTable) -> str:
    paper = table.paper.citation if table.paper is not None else table.suite
    parts = [f"{table.heading} ({table.unit_text})."]
    if table.paper_data:
        parts.append(f"Paper rows: as printed in {paper}, measured on {table.paper_data}.")
    if table.user_rows:
        parts.append("Rows marked (ours): " + (", ".join(table.your_data) or "these results")
                     + ", each value with its 95 % interval in brackets.")
    parts += [note.rstrip(".") + "." for note in table.notes]
    if any(c is not None and c.best for row in table.rows for c in row.cells):
        parts.append("★: best value, its interval separated from every other row.")
    return " ".join(parts)


def _label(table: PaperTable, row) -> str:
    label = row.label
    if row.kind == "yours":
        label += " (ours" + (", quick" if row.quick else "") + (", subset" if row.subset else "") + ")"
        if row.anchor and table.spec.user_row is not None and row.anchor != row.label:
            label = f"{row.anchor}: {label}"
    return label


def _cell_text(cell: TableCell | None) -> tuple[str, str]:
    if cell is None:
        return "–", ""
    main, spread = cell.text()
    return (f"{main}†" if cell.by_construction else main), spread


# --- LaTeX -----------------------------------------------------------------------------------------
def to_latex(table: PaperTable, *, label: str | None = None) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    columns = table.columns
    spec = "l" + "".join("r" for _ in columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    groups = table.groups()
    if any(group for group, _ in groups):
        head, rules, start = [""], [], 2
        for group, span in groups:
            head.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(group)}}}" if span > 1 else latex_escape(group))
            if group:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        lines.append(" & ".join(head) + r" \\")
        lines.append(" ".join(rules))
    lines.append(" & ".join([latex_escape(table.spec.row_header)] + [latex_escape(c.label) for c in columns]) + r" \\")
    lines.append(r"\midrule")
    for row in table.rows:
        cells = [latex_escape(_label(table, row))]
        for cell in row.cells:
            main, spread = _cell_text(cell)
            text = latex_escape(main)
            if cell is not None and cell.best:
                text = rf"\textbf{{{text}}}$^\star$"
            if spread:
                text += r" {\scriptsize " + latex_escape(spread) + "}"
            cells.append(text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(_caption(table))}}}"]
    if label is not None:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def latex_document(tables: list[PaperTable]) -> str:
    """A complete LaTeX document of ``tables`` (pdflatex with booktabs compiles it as it is)."""
    body = "\n".join(to_latex(t, label=f"tab:{t.suite}") for t in tables)
    return ("\\documentclass{article}\n\\usepackage[margin=1.5cm,landscape]{geometry}\n\\usepackage{booktabs}\n"
            "\\begin{document}\n" + body + "\\end{document}\n")


# --- Markdown ----------------------------------------------------------------------------------------
def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(table: PaperTable, *, heading: str = "###", verdict: bool = True) -> str:
    """A GitHub-flavoured Markdown table with its heading, the suite's verdict and a caption."""
    headers = [table.spec.row_header] + [f"{c.group} {c.label}".strip() for c in table.columns]
    lines = [f"{heading} {_md(table.heading)}", ""]
    if verdict and table.verdict:
        lines += [f"Verdict: {_md(table.verdict)}", ""]
    lines += ["| " + " | ".join(_md(h) for h in headers) + " |", "|---|" + "|".join("---:" for _ in table.columns) + "|"]
    for row in table.rows:
        label = _label(table, row)
        cells = [f"**{_md(label)}**" if row.kind == "yours" else _md(label)]
        for cell in row.cells:
            main, spread = _cell_text(cell)
            text = f"**{main}** ★" if cell is not None and cell.best else main
            cells.append(_md(f"{text} {spread}".strip()))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"*{_md(_caption(table))}*", ""]
    return "\n".join(lines) + "\n"


def markdown_document(tables: list[PaperTable], title: str = "Paper tables") -> str:
    """Every table under one title."""
    return f"# {_md(title)}\n\n" + "\n".join(to_markdown(t) for t in tables)


# --- CSV ------------------------------------------------------------------------------------------------
def to_csv(table: PaperTable) -> str:
    """One row per table row: the label, ``paper``/``yours``, then per column its value, the
    interval's ends and the paper's std (in the table's unit; the paper's values as printed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["row", "kind"]
    for column in table.columns:
        name = f"{column.group} {column.label}".strip()
        header += [name, f"{name} low", f"{name} high", f"{name} std"]
    writer.writerow(header)
    for row in table.rows:
        line = [_label(table, row), row.kind]
        for cell in row.cells:
            if cell is None:
                line += ["", "", "", ""]
                continue
            main, _spread = cell.text()
            low = "" if cell.low is None else f"{cell.low:.{cell.digits}f}"
            high = "" if cell.high is None else f"{cell.high:.{cell.digits}f}"
            std = ""
            if cell.printed is not None and "±" in cell.printed:
                std = cell.printed.partition("±")[2].strip()
            line += [main, low, high, std]
        writer.writerow(line)
    return buffer.getvalue()


def _file_name(suite: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", suite) or "suite"


def write_export(tables: list[PaperTable], out_dir: str | Path, fmt: str, *, title: str = "Paper tables") -> list[Path]:
    """Write ``tables`` as ``fmt`` into ``out_dir``: one file per suite (``<suite>.tex``,
    ``.md`` or ``.csv``) and, for LaTeX and Markdown, every table in one document
    (``paper-tables.tex``, which compiles on its own; ``paper-tables.md``). Returns the paths."""
    if fmt not in SUFFIX:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(SUFFIX)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writer = {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}[fmt]
    written = []
    for table in tables:
        path = out / f"{_file_name(table.suite)}{SUFFIX[fmt]}"
        atomic_write_text(path, writer(table))
        written.append(path)
    if fmt == "latex":
        path = out / "paper-tables.tex"
        atomic_write_text(path, latex_document(tables))
        written.append(path)
    elif fmt == "markdown":
        path = out / "paper-tables.md"
        atomic_write_text(path, markdown_document(tables, title))
        written.append(path)
    return written


__all__ = ["FORMATS", "latex_document", "latex_escape", "markdown_document", "to_csv", "to_latex", "to_markdown",
           "write_export"]
