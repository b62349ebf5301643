"""A copy (pointer-generator) head for chemassay's BART models.

A product of a reaction is written mostly with the atoms of its reactants, in runs that follow
the reactants' own SMILES. A plain encoder–decoder has to *learn* to copy: its decoder must
find, through cross-attention, the source token that comes next and carry it through every
layer into the vocabulary softmax, and on two CPU cores that ability appears only after
thousands of updates. The copy head gives the decoder that path from the first step (See et
al.'s pointer-generator, the "copy attention" option of the OpenNMT Transformer): at each
output position

    p(token) = g · softmax(vocabulary logits) + (1 − g) · Σ_{source positions i with that token} a_i

where ``a`` is one attention distribution of the decoder's last hidden state over the
encoder's last hidden states and ``g = sigmoid(w · h)`` is the learned probability of
generating rather than copying. Everything else is Hugging Face's BART (or mBART) unchanged:
the encoder, the decoder, its cache during generation, beam search.

The model returns log-probabilities as its ``logits``; they are normalised already, so the
cross-entropy of the training loop and the log-softmax of ``generate`` leave them as they
are. During ``generate`` the source token ids travel as ``source_ids`` (expanded with the
beams like every other model input).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any


def _copy_forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                  encoder_outputs=None, source_ids=None, labels=None, **kwargs: Any):
    import torch
    from transformers.modeling_outputs import Seq2SeqLMOutput

    kwargs.pop("return_dict", None)
    outputs = self.model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                         decoder_attention_mask=decoder_attention_mask, encoder_outputs=encoder_outputs,
                         return_dict=True, **kwargs)
    source = input_ids if input_ids is not None else source_ids
    if source is None:
        raise ValueError("a copy model needs the source token ids (source_ids=...) when given encoder outputs")
    hidden = outputs.last_hidden_state
    memory = outputs.encoder_last_hidden_state
    vocab_logits = self.lm_head(hidden) + self.final_logits_bias.to(hidden.device)
    scores = torch.matmul(self.copy_query(hidden), memory.transpose(1, 2)).float() / math.sqrt(hidden.size(-1))
    scores = scores.masked_fill((source == self.config.pad_token_id)[:, None, :], torch.finfo(scores.dtype).min)
    attention = scores.softmax(-1)
    copied = torch.zeros(hidden.size(0), hidden.size(1), vocab_logits.size(-1), dtype=attention.dtype,
                         device=hidden.device)
    copied.scatter_add_(2, source[:, None, :].expand(-1, hidden.size(1), -1), attention)
    generate = torch.sigmoid(self.copy_gate(hidden).float())
    probabilities = generate * vocab_logits.float().softmax(-1) + (1.0 - generate) * copied
    log_probabilities = torch.log(probabilities.clamp_min(1e-12))
    return Seq2SeqLMOutput(logits=log_probabilities, past_key_values=outputs.past_key_values,
                           encoder_last_hidden_state=memory)


def _add_copy_layers(model) -> None:
    from torch import nn

    width = model.config.d_model
    model.copy_query = nn.Linear(width, width, bias=False)
    model.copy_gate = nn.Linear(width, 1)


@cache
def copy_class(architecture: str):
    """The copy-head subclass of ``BartForConditionalGeneration`` (``bart``) or
    ``MBartForConditionalGeneration`` (``mbart``)."""
    import transformers

    base = transformers.MBartForConditionalGeneration if architecture == "mbart" else \
        transformers.BartForConditionalGeneration

    def __init__(self, config) -> None:
        base.__init__(self, config)
        _add_copy_layers(self)

    name = f"Copy{base.__name__}"
    return type(name, (base,), {"__init__": __init__, "forward": _copy_forward,
                                "__doc__": f"{base.__name__} with a pointer-generator copy head."})
