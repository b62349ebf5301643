"""Text generation with a local Hugging Face checkpoint (the ``hf`` extra).

Loads a causal language model (``AutoModelForCausalLM``) or an encoder-decoder
(``AutoModelForSeq2SeqLM``, chosen when the config says ``is_encoder_decoder``) and its
tokenizer from a folder, with ``local_files_only`` (nothing is downloaded), or a causal model
from a **GGUF file** (llama.cpp's format: a path ending in ``.gguf``, or a folder and
``gguf_file``): transformers reads its config, tokenizer and chat template from the file and
de-quantizes the weights to float32 (needs the ``gguf`` package: extra ``llm-local``). A
prompt is wrapped in the tokenizer's chat template when it has one (as a single user
message), else given as plain text. Decoding is greedy unless a temperature is set (then
sampling, seeded). For causal models only the newly generated tokens are decoded.

The last checkpoint loaded stays in memory (:func:`load_checkpoint`), so the protocols of
several suites asked in one process (``chemassay assay --model hf:...``) load it once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError, require

_LOADED: dict[tuple[Any, ...], tuple[Any, Any, bool]] = {}
"""The last checkpoint loaded: (folder, gguf file, device, files' sizes and times) →
(tokenizer, model, encoder-decoder)."""


@dataclass
class GenerationResult:
    """Generated text and how many new tokens it took."""

    text: str
    new_tokens: int


def checkpoint_location(path: str | os.PathLike, gguf_file: str | None = None) -> tuple[Path, str | None]:
    """``(folder, gguf_file)`` of a local checkpoint: a folder saved with ``save_pretrained``
    (``config.json``, weights, tokenizer), a ``.gguf`` file, or a folder and the name of a GGUF
    file in it; anything else is a one-line error.

    >>> checkpoint_location("/no/such/model.gguf")
    Traceback (most recent call last):
    ...
    chemassay.contract.errors.UserInputError: /no/such/model.gguf: no such GGUF file
    """
    target = Path(path).expanduser()
    if gguf_file is None and target.suffix.lower() == ".gguf":
        if not target.is_file():
            raise UserInputError(f"{target}: no such GGUF file")
        return target.parent, target.name
    if not target.is_dir():
        raise UserInputError(f"{target}: not a folder with a Hugging Face checkpoint (config.json, weights, tokenizer) "
                             "nor a .gguf file")
    if gguf_file is not None:
        if not (target / gguf_file).is_file():
            found = sorted(p.name for p in target.glob("*.gguf"))
            raise UserInputError(f"{target}: no GGUF file {gguf_file!r} in it"
                                 + (f" (it has {', '.join(found[:5])})" if found else ""))
        return target, gguf_file
    if not (target / "config.json").is_file():
        found = sorted(p.name for p in target.glob("*.gguf"))
        hint = f"; for its GGUF weights give the file: {target / found[0]}" if found else ""
        raise UserInputError(f"{target}: no config.json; expected a checkpoint saved with save_pretrained(){hint}")
    return target, None


def load_checkpoint(folder: Path, gguf_file: str | None = None, device: str = "cpu") -> tuple[Any, Any, bool]:
    """``(tokenizer, model, encoder_decoder)`` of a local checkpoint (see
    :func:`checkpoint_location`), in eval mode on ``device``. The last one loaded is kept, so
    a second call with the same arguments returns the same objects at once (a GGUF file takes
    tens of seconds to read and de-quantize)."""
    folder = Path(folder).resolve()
    files = [folder / gguf_file] if gguf_file else sorted(p for p in folder.iterdir() if p.is_file())
    # a checkpoint saved again under the same name (a retrained model) is loaded again
    stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(folder), gguf_file, device, stamp)
    if key in _LOADED:
        return _LOADED[key]
    require("torch", "hf", "local Hugging Face models")
    transformers = require("transformers", "hf", "local Hugging Face models")
    transformers.utils.logging.disable_progress_bar()
    if gguf_file is not None:
        require("gguf", "llm-local", "GGUF checkpoints")
        # a GGUF file holds one decoder-only model (llama.cpp's format); config, tokenizer and
        # chat template are read from the file itself
        options: dict[str, Any] = {"gguf_file": gguf_file, "local_files_only": True}
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, **options)
        encoder_decoder = False
    else:
        config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
        encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
        loader = transformers.AutoModelForSeq2SeqLM if encoder_decoder else transformers.AutoModelForCausalLM
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = loader.from_pretrained(folder, local_files_only=True)
    model = model.to(device)
    model.eval()
    _LOADED.clear()  # one checkpoint in memory at a time
    _LOADED[key] = (tokenizer, model, encoder_decoder)
    return _LOADED[key]


def unload_checkpoints() -> None:
    """Forget the checkpoint :func:`load_checkpoint` keeps (its memory is freed once no model
    object holds it)."""
    _LOADED.clear()


class HFTextGenerator:
    """Generate text from prompts with a local checkpoint (see the module docstring).

    ``path`` is a checkpoint folder or a ``.gguf`` file (or a folder with ``gguf_file``);
    ``threads`` sets torch's CPU threads (one is fastest on a machine whose cores are busy)."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        gguf_file: str | None = None,
        max_new_tokens: int = 1024,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        device: str = "cpu",
        threads: int | None = None,
        use_chat_template: bool = True,
    ) -> None:
        folder, gguf_file = checkpoint_location(path, gguf_file)
        self.torch = require("torch", "hf", "local Hugging Face models")
        if threads:
            self.torch.set_num_threads(threads)
        self.tokenizer, self.model, self.encoder_decoder = load_checkpoint(folder, gguf_file, device)
        self.path = folder / gguf_file if gguf_file else folder
        self.gguf_file = gguf_file
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self.use_chat_template = use_chat_template and bool(getattr(self.tokenizer, "chat_template", None))
        self.name = Path(gguf_file).stem if gguf_file else folder.name

    def _input_text(self, prompt: str) -> str:
        if self.use_chat_template:
            return self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
        return prompt

    def generate(self, prompt: str) -> GenerationResult:
        """Generate the continuation (causal) or the output (seq2seq) of one prompt."""
        torch = self.torch
        encoded = self.tokenizer(self._input_text(prompt), return_tensors="pt").to(self.device)
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self.tokenizer.eos_token_id
        options = {"max_new_tokens": self.max_new_tokens, "pad_token_id": pad_id}
        if self.temperature > 0:
            torch.manual_seed(self.seed)
            options.update(do_sample=True, temperature=self.temperature, top_p=self.top_p)
        else:
            options.update(do_sample=False)
        with torch.no_grad():
            output = self.model.generate(**encoded, **options)
        # Decoder outputs start with the decoder-start token; causal outputs repeat the prompt.
        tokens = output[0][1:] if self.encoder_decoder else output[0][encoded["input_ids"].shape[1]:]
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return GenerationResult(text.strip(), int(tokens.shape[0]))

    def generate_ranked(self, prompt: str, k: int) -> list[str]:
        """The ``k`` best continuations of a raw prompt by beam search, best first."""
        torch = self.torch
        encoded = self.tokenizer(prompt, return_tensors="pt").to(self.device)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            output = self.model.generate(**encoded, max_new_tokens=self.max_new_tokens, num_beams=max(k, 1),
                                         num_return_sequences=max(k, 1), do_sample=False, pad_token_id=pad_id,
                                         early_stopping=True)
        start = 1 if self.encoder_decoder else encoded["input_ids"].shape[1]
        return [self.tokenizer.decode(row[start:], skip_special_tokens=True).replace(" ", "").strip() for row in output]

    def sample_unprompted(self, n: int, seed: int, batch_size: int = 64) -> list[str]:
        """``n`` sequences sampled from the start token (a causal LM of SMILES), seeded."""
        torch = self.torch
        if self.encoder_decoder:
            raise ValueError("unprompted sampling needs a causal language model")
        start_id = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.cls_token_id
        if start_id is None:
            raise ValueError("the tokenizer has no start token to sample from")
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        generator = torch.Generator(device="cpu").manual_seed(seed)
        samples: list[str] = []
        while len(samples) < n:
            size = min(batch_size, n - len(samples))
            torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
            start = torch.full((size, 1), start_id, dtype=torch.long, device=self.device)
            with torch.no_grad():
                output = self.model.generate(input_ids=start, attention_mask=torch.ones_like(start), do_sample=True,
                                             temperature=self.temperature or 1.0, top_p=self.top_p,
                                             max_new_tokens=self.max_new_tokens, pad_token_id=pad_id)
            samples += [self.tokenizer.decode(row[1:], skip_special_tokens=True).replace(" ", "").strip() for row in output]
        return samples[:n]

    def generate_many(
        self,
        prompts: Sequence[str],
        on_result: Callable[[int, GenerationResult | Exception], None] | None = None,
    ) -> list[GenerationResult | Exception]:
        """Generate for each prompt in turn, reporting each outcome as it finishes."""
        outcomes: list[GenerationResult | Exception] = []
        for index, prompt in enumerate(prompts):
            try:
                outcome: GenerationResult | Exception = self.generate(prompt)
            except (RuntimeError, ValueError, IndexError) as exc:  # a too-long prompt, an odd tokenizer...
                outcome = exc
            outcomes.append(outcome)
            if on_result is not None:
                on_result(index, outcome)
        return outcomes
