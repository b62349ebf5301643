"""Reading chemistry out of a text model's answer: what every protocol's parser shares.

An answer may wrap its content in a ``<think>`` block, code fences, numbering, bullets or a
label (``Answer:``); these helpers strip that and find SMILES in what is left. The protocols
(each suite's ``protocol.py``) build their parsers from them.

Two readings (the ``extract`` setting of the text model kinds):

* **lenient** (the default): the answer is read as a chemist reads what an LLM writes. On top
  of the strict reading, Markdown emphasis (``**X**``, ``*X*``, ``__X__``) and inline code
  (```X```) are unwrapped where they wrap a token (:func:`strip_markup`, which leaves every
  SMILES character alone: a token that is a valid SMILES as written, such as ``*CC*``, keeps
  its ``*``), a JSON object or list (``{"products": [...]}``, ``["...", "..."]``, also in a
  ```json fence) is read for its answer fields (:func:`json_answer`), a reaction SMILES
  (``A.B>>C``) or an equation (``A + B -> C``) gives its product side, and in prose a line
  with a bullet, a number or a label (``Product:``) or a lone SMILES outranks a SMILES
  merely mentioned in a sentence, whose last mention counts first;
* **strict** (``strict=True``): the papers' protocols: bare lines, bullets, numbering and
  labels stripped, the first SMILES of each line.

>>> clean_answer("<think>esters...</think>```\\nCCOC(C)=O\\n```").strip()
'CCOC(C)=O'
>>> ranked_smiles("1. CCO\\n2. not a molecule\\n3. c1ccccc1", 2)
['CCO', 'c1ccccc1']
>>> ranked_smiles("The product is **CCOC(C)=O** (ethyl acetate).", 1)
['CCOC(C)=O']
>>> ranked_smiles('{"products": ["CCOC(C)=O"]}', 1), ranked_smiles("CCO.CC(=O)Cl>>CCOC(C)=O", 1)
(['CCOC(C)=O'], ['CCOC(C)=O'])
>>> strip_markup("**CCOC(C)=O** and `C#N`, but *CC* stays")
'CCOC(C)=O and C#N, but *CC* stays'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d{1,3}[.):]|#\d+[.):]?)\s*")
_LABEL = re.compile(r"^\s*(?:answer|products?|prediction|smiles|product smiles|final answer|result)\s*[:=-]\s*",
                    re.IGNORECASE)

# Lenient reading: a bullet needs the space Markdown needs after it (a SMILES may start with
# '*'); a Markdown heading is a bullet too.
_BULLET_LENIENT = re.compile(r"^\s*(?:[-*•+]\s+|\(?\d{1,3}[.):]\s*|#\d+[.):]?\s*|#{1,6}\s+)")
_LABEL_LENIENT = re.compile(
    r"^\s*(?:(?:the\s+)?(?:final|major|main|predicted|expected|balanced|most\s+likely)\s+)?"
    r"(?:answer|products?|prediction|smiles|result|output|product\s+bag)(?:\s*\d{1,2})?(?:\s+smiles)?"
    r"(?:\s*\((?:smiles|formulas?)\))?\s*(?:[:=]|-(?!>))\s*",
    re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# ``**X**`` / ``__X__`` (and ``***X***``): opened at the start of a token, closed at its end
# (before spaces or sentence punctuation); ``*X*`` / ``_X_`` likewise, kept where the token
# is a valid SMILES as written (``*CC*``: two dummy atoms).
_STRONG = re.compile(r"(?<![^\s(\[])(\*\*\*|___|\*\*|__)(?=\S)(.+?)(?<=\S)\1(?=[\s.,;:!?)\]]|$)")
_EMPHASIS = re.compile(r"(?<!\S)([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?=[\s.,;:!?]|$)")
_ARROW = re.compile(r"\s+(?:<=+>|<-+>|-{1,2}>|=+>|>>)\s+|\s*(?:⇌|⟶|→|⇒|⟹|⟹|↦)\s*|\s+=\s+")
_QUOTES = "'\"“”‘’"
_SENTENCE_END = ".,;:!?"
MAX_MARKUP_LINE = 4000
"""Longer lines are read without unwrapping Markdown (no SMILES is that long)."""
MAX_JSON_TRIES = 20
"""Positions of ``{``/``[`` tried as the start of a JSON answer (SMILES brackets fail at once)."""

ANSWER_KEYS = ("products", "product", "predictions", "prediction", "answer", "answers", "smiles",
               "product_smiles", "products_smiles", "major_product", "result", "output", "molecules", "samples")
"""Fields of a JSON answer that hold the answer, in the order they are looked for."""


def clean_answer(text: str) -> str:
    """The answer without ``<think>`` blocks and code fences."""
    text = _THINK.sub("", text or "")
    if "<think>" in text.lower():  # an unterminated reasoning block: keep what follows nothing
        text = text[: text.lower().index("<think>")]
    return _FENCE.sub("", text)


def candidate_lines(text: str) -> list[str]:
    """The answer's non-empty lines without bullets, numbering, labels and quotes (the strict
    reading: no Markdown is unwrapped)."""
    lines = []
    for raw in clean_answer(text).splitlines():
        line = _LABEL.sub("", _BULLET.sub("", raw.strip())).strip().strip("`'\"").strip()
        if line:
            lines.append(line)
    return lines


def as_smiles(candidate: str) -> str | None:
    """``candidate`` (trailing punctuation and quotes stripped) if it parses as a molecule."""
    token = candidate.strip().rstrip(".,;").strip("`'\"")
    if not token or " " in token or len(token) > 2000:
        return None
    try:
        with rdkit_log_silenced():
            parse_smiles(token)
    except (InvalidSmiles, ValueError, RuntimeError):
        return None
    return token


def _looks_like_smiles_word(word: str) -> bool:
    return len(word) >= 4 or (len(word) >= 2 and not word.isalpha())


# --------------------------------------------------------------------------- Markdown
def _unwrap(line: str) -> tuple[str, list[str]]:
    """``line`` with inline code and emphasis unwrapped, and the texts they wrapped."""
    if len(line) > MAX_MARKUP_LINE:
        return line, []
    spans: list[str] = []

    def code(match: re.Match[str]) -> str:
        spans.append(match.group(2).strip())
        return match.group(2).strip()

    def strong(match: re.Match[str]) -> str:
        spans.append(match.group(2))
        return match.group(2)

    def emphasis(match: re.Match[str]) -> str:
        token = match.string[match.start():].split(None, 1)[0].rstrip(_SENTENCE_END)
        if "*" in token and as_smiles(token) is not None:
            return match.group(0)  # a SMILES with dummy atoms (``*CC*``), not emphasis
        spans.append(match.group(2))
        return match.group(2)

    text = _CODE_SPAN.sub(code, line).replace("`", "")
    for _ in range(3):  # nested emphasis: ``**_X_**``
        unwrapped = _EMPHASIS.sub(emphasis, _STRONG.sub(strong, text))
        if unwrapped == text:
            break
        text = unwrapped
    return text, spans


def strip_markup(text: str) -> str:
    """``text`` with Markdown inline code and emphasis unwrapped where they wrap a token.

    Backticks go wherever they are (no SMILES has one); ``**X**``, ``__X__`` and ``_X_`` are
    unwrapped where they open a token and close one (before a space or sentence punctuation);
    ``*X*`` too, unless the token is a valid SMILES as written (``*CC*``). A SMILES never
    loses a character, except one that starts with ``**`` and has a later ``**`` closing a
    token (read as bold: dummy-atom chains are that rare).

    >>> strip_markup("The product is **C=C(*)C#N**.")
    'The product is C=C(*)C#N.'
    >>> strip_markup("[NH4+].[Cl-] and C(*)C*")
    '[NH4+].[Cl-] and C(*)C*'
    """
    return "\n".join(_unwrap(line)[0] for line in str(text).split("\n"))


# ------------------------------------------------------------------------------- lines
@dataclass
class AnswerLine:
    """One line of an answer as the lenient reading sees it: ``text`` without bullets,
    numbering, Markdown, labels and quotes; ``spans`` the texts Markdown wrapped; ``marked``
    whether a bullet, a number or a label said it is an answer."""

    text: str
    spans: list[str] = field(default_factory=list)
    marked: bool = False

    @property
    def words(self) -> list[str]:
        """The line's words without surrounding punctuation, quotes and stray parentheses."""
        return [clean_word(word) for word in self.text.split()]


def answer_lines(text: str) -> list[AnswerLine]:
    """The answer's non-empty lines as the lenient reading sees them (:class:`AnswerLine`)."""
    lines = []
    for raw in clean_answer(text).splitlines():
        line, spans = _unwrap(raw.strip())
        marked = False
        for pattern in (_BULLET_LENIENT, _LABEL_LENIENT):
            found = pattern.match(line)
            if found and found.end() < len(line.rstrip()):
                line, marked = line[found.end():], True
        line = line.strip().strip(_QUOTES).strip()
        if line:
            lines.append(AnswerLine(line, spans, marked))
    return lines


def clean_word(word: str) -> str:
    """A word without trailing sentence punctuation, quotes and unbalanced parentheses
    (``(CCO),`` → ``CCO``)."""
    word = word.strip().strip(_QUOTES).rstrip(_SENTENCE_END).strip(_QUOTES)
    while word.startswith("(") and word.count("(") > word.count(")"):
        word = word[1:]
    while word.endswith(")") and word.count(")") > word.count("("):
        word = word[:-1]
    if word.startswith("(") and word.endswith(")") and as_smiles(word) is None and as_smiles(word[1:-1]):
        word = word[1:-1]
    return word


def product_side(text: str) -> str | None:
    """What follows the last reaction arrow of a line (``->``, ``→``, ``=>``, ``>>`` or
    `` = `` between spaces), or ``None`` where it has none."""
    parts = _ARROW.split(text)
    return parts[-1].strip() if len(parts) > 1 else None


_ROLE = re.compile(r"(?<!-)>")  # ``->`` is a dative bond inside a SMILES


def reaction_products(token: str) -> str | None:
    """The products of a reaction SMILES (``A.B>C>D`` or ``A.B>>D``), if they parse."""
    fields = _ROLE.split(token.strip())
    if len(fields) != 3 or " " in token.strip() or not fields[2]:
        return None
    return as_smiles(fields[2])


def read_smiles(token: str) -> str | None:
    """A SMILES from one token: the token itself, or a reaction SMILES's products."""
    return reaction_products(token) if _ROLE.search(token) else as_smiles(token)


# -------------------------------------------------------------------------------- JSON
def json_answer(text: str) -> Any | None:
    """The first JSON object or list in an answer (in a ```json fence or in prose) that holds
    some text, else ``None``."""
    body = clean_answer(text)
    decoder = json.JSONDecoder()
    for tries, match in enumerate(re.finditer(r"[\[{]", body)):
        if tries >= MAX_JSON_TRIES:
            break
        try:
            value, _ = decoder.raw_decode(body, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, (dict, list)) and _holds_text(value):
            return value
    return None


MAX_JSON_DEPTH = 8
"""Deepest JSON answer read (an answer nests two or three levels; deeper is not an answer)."""


def _holds_text(value: Any) -> bool:
    """Whether a JSON value, nested at most :data:`MAX_JSON_DEPTH` deep, holds some text."""
    found = False
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        if isinstance(item, str):
            found = found or bool(item.strip())
        elif isinstance(item, dict):
            stack.extend((child, depth + 1) for child in [*item.keys(), *item.values()])
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return found


def answer_field(value: Any, keys: Sequence[str] = ANSWER_KEYS) -> Any:
    """The answer a JSON value holds: an object's first field among ``keys`` (any case), its
    only field, else nothing; anything else as it is."""
    if not isinstance(value, dict):
        return value
    lowered = {str(key).lower().replace(" ", "_"): item for key, item in value.items()}
    for key in keys:
        if key in lowered:
            return lowered[key]
    return next(iter(value.values())) if len(value) == 1 else None


def json_texts(value: Any, keys: Sequence[str] = ANSWER_KEYS) -> list[str]:
    """The texts a JSON answer gives, in order (a list's items, an object's answer field)."""
    value = answer_field(value, keys)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in json_texts(item, keys)]
    if isinstance(value, dict):
        return json_texts(value, keys)
    return []


# ------------------------------------------------------------------------------ SMILES
_ANNOTATION = tuple("(-–—:,=")


MAX_PROSE_WORDS = 200
"""Words of a prose line tried as SMILES, from its end (a line of thousands of SMILES-like
words that are not SMILES would otherwise cost a parse each)."""


def smiles_words(words: Iterable[str]) -> list[str]:
    """The words that look like SMILES (a short purely alphabetic word, ``I``, ``No``, ``CO``,
    is far more likely English), the last :data:`MAX_PROSE_WORDS` of them, last first."""
    return [w for w in reversed(list(words)) if _looks_like_smiles_word(w)][:MAX_PROSE_WORDS]


def _last_smiles(words: Iterable[str]) -> str | None:
    return next((s for s in (read_smiles(w) for w in smiles_words(words)) if s), None)


def read_line(line: AnswerLine) -> tuple[str | None, bool]:
    """The SMILES one line gives, and whether the line is an answer rather than prose.

    An answer line is a lone SMILES or reaction SMILES, an equation (its product side is
    read), a line that starts with a SMILES (``CCO (ethanol)``), or a line with a bullet, a
    number or a label. Otherwise the line's last SMILES that Markdown wrapped, else its last
    word that looks like SMILES, is a SMILES mentioned in prose.
    """
    whole = read_smiles(line.text)
    if whole is not None:
        return whole, True
    region = product_side(line.text)
    if region is not None:  # an equation: only its product side
        found = read_smiles(clean_word(region))
        if found is None:
            words = region.split()
            found = read_smiles(clean_word(words[0])) if words else None
        if found is None:
            found = next((s for s in (read_smiles(clean_word(span)) for span in reversed(line.spans) if span in region)
                          if s), None)
        return (found if found is not None else _last_smiles(clean_word(w) for w in region.split())), True
    words = line.text.split()
    first = clean_word(words[0])
    rest = line.text[len(words[0]):].lstrip()
    if _looks_like_smiles_word(first) or rest.startswith(_ANNOTATION):
        found = read_smiles(first)
        if found is not None:
            return found, True
    found = next((s for s in (read_smiles(clean_word(span)) for span in reversed(line.spans)) if s), None)
    return (found if found is not None else _last_smiles(clean_word(w) for w in words)), line.marked


def line_smiles(line: AnswerLine) -> str | None:
    """The SMILES one line gives (see :func:`read_line`)."""
    return read_line(line)[0]


def _distinct(candidates: Iterable[str | None], k: int) -> list[str]:
    found: list[str] = []
    for candidate in candidates:
        if candidate is not None and candidate not in found:
            found.append(candidate)
            if len(found) >= k:
                break
    return found


def _ranked_smiles_strict(text: str, k: int) -> list[str]:
    found: list[str] = []
    for line in candidate_lines(text):
        candidate = as_smiles(line)
        if candidate is None:
            # A SMILES inside prose: a short purely alphabetic word ("I", "No", "CO") is far
            # more likely English than an answer, so a word must look like SMILES.
            words = [w.strip(",;:") for w in re.split(r"\s+", line) if _looks_like_smiles_word(w.strip(",;:"))]
            candidate = next((c for c in (as_smiles(w) for w in reversed(words)) if c), None)
        if candidate is not None and candidate not in found:
            found.append(candidate)
        if len(found) >= k:
            break
    return found


def ranked_smiles(text: str, k: int, *, strict: bool = False) -> list[str]:
    """Up to ``k`` distinct SMILES from an answer, in the order given.

    Strict: a line counts if it (or one of its whitespace-separated words) parses as a
    molecule; prose lines are skipped; a bare SMILES answer is one candidate. Lenient (the
    default, see the module docstring): a JSON answer's texts, else the answer lines
    (:func:`read_line`: a lone SMILES, a reaction SMILES, an equation, a line that starts
    with a SMILES or carries a bullet, a number or a label) in order, else the SMILES
    mentioned in prose, the last line first (an answer in prose ends with its conclusion).
    """
    if strict:
        return _ranked_smiles_strict(text, k)
    if k < 1:
        return []
    value = json_answer(text)
    if value is not None:
        found = _distinct((line_smiles(line) for item in json_texts(value) for line in answer_lines(item)), k)
        if found:
            return found
    read = [read_line(line) for line in answer_lines(text)]
    answers = [smiles for smiles, answer in read if smiles is not None and answer]
    if answers:
        return _distinct(answers, k)
    return _distinct((smiles for smiles, _ in reversed(read)), k)


# ------------------------------------------------------------------------- generation
def _is_prose(line: AnswerLine) -> bool:
    """An introduction (``Here are 5 molecules:``) or a sentence: no sample."""
    words = line.text.split()
    if line.text.endswith(":") and len(words) > 1:
        return True
    first = clean_word(words[0])
    return (len(words) >= 3 and first.isalpha() and read_smiles(first) is None
            and not any(_looks_like_smiles_word(w) and read_smiles(w) for w in line.words))


def smiles_lines(text: str, limit: int | None = None, *, strict: bool = False) -> list[str]:
    """One sample per answer line (its first word), valid or not, up to ``limit``.

    Lenient (the default): a JSON list's texts are the lines; Markdown is unwrapped; an
    introduction or a sentence (three words or more, the first an English word, none a
    SMILES) is no sample.
    """
    if strict:
        samples = [line.split()[0] for line in candidate_lines(text)]
    else:
        value = json_answer(text)
        if value is not None:
            lines = [line for item in json_texts(value) for line in answer_lines(item)]
        else:
            lines = [line for line in answer_lines(text) if not _is_prose(line)]
        samples = [word for word in (line.text.split()[0].rstrip(".,;") for line in lines) if word]
    return samples[:limit] if limit is not None else samples
