"""HMM: the MOSES hidden Markov model baseline, on hmmlearn's ``CategoricalHMM``.

MOSES (``moses/baselines/hmm.py``) trains a 200-state HMM with discrete emissions over the
SMILES characters on the first 100,000 training molecules with Baum–Welch (pomegranate 0.x,
an explicit end state, k-means|| initialisation, 100 mini-batch epochs). pomegranate 0.x no
longer installs; here the model is hmmlearn's ``CategoricalHMM`` (Baum–Welch on the whole
batch, ``implementation="scaling"``, hmmlearn's own random initialisation from the seed):

* every training SMILES is its characters followed by an explicit **end symbol**, so the
  model learns where molecules end (hmmlearn has no end state); sampling starts from the
  start distribution and emits characters until it emits the end symbol (or ``max_len``
  characters);
* **checkpoint per EM iteration**: after every iteration the parameters, the iteration
  number and the log-likelihood history are written atomically to ``hmm.npz`` in the model
  folder; running the same training again resumes from there. EM is deterministic given
  the parameters, so a run cut into pieces ends with the uncut run's parameters.
"""

from __future__ import annotations

import json
import os
import time
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.runtime.files import atomic_writer
from chemassay.runtime.progress import progress_task
from chemassay.suites.generation.baselines.neural import batch_seed

FORMAT = "chemassay.generation.hmm/1"


@dataclass
class HMMConfig:
    states: int = 200
STATE_FILE = "hmm.npz"


def _encode(smiles: Sequence[str], chars: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    index = {c: i for i, c in enumerate(chars)}
    end = len(chars)
    codes: list[int] = []
    lengths = []
    for text in smiles:
        codes.extend(index[c] for c in text)
        codes.append(end)
        lengths.append(len(text) + 1)
    return np.asarray(codes, dtype=np.int64).reshape(-1, 1), np.asarray(lengths, dtype=np.int64)


class HMMModel:
    """A trained categorical HMM over SMILES characters plus the end symbol."""

    def __init__(self, chars: Sequence[str], startprob: np.ndarray, transmat: np.ndarray, emissionprob: np.ndarray,
                 info: dict[str, Any] | None = None) -> None:
        self.chars = list(chars)
        self.startprob = np.asarray(startprob, dtype=np.float64)
        self.transmat = np.asarray(transmat, dtype=np.float64)
        self.emissionprob = np.asarray(emissionprob, dtype=np.float64)
        self.info = dict(info or {})
        states, symbols = self.emissionprob.shape
        if self.transmat.shape != (states, states) or self.startprob.shape != (states,) or symbols != len(chars) + 1:
            raise UserInputError("inconsistent HMM parameters (is the model file damaged?)")

    @property
    def n_states(self) -> int:
        return len(self.startprob)

    @staticmethod
    def _cdf(rows: np.ndarray) -> np.ndarray:
        cdf = np.cumsum(rows, axis=-1)
        return cdf / cdf[..., -1:]

    def sample(self, n: int, seed: int = 0, *, max_len: int = 100, batch: int = 4096) -> list[str]:
        """``n`` strings; batch ``b`` of rows draws from ``default_rng(batch_seed(seed, b))``."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserInputError(f"cannot sample {n!r} molecules; n must be a whole number, 0 or more")
        start_cdf = self._cdf(self.startprob)
        trans_cdf = self._cdf(self.transmat)
        emit_cdf = self._cdf(self.emissionprob)
        end = len(self.chars)
        out: list[str] = []
        for number, first in enumerate(range(0, n, batch)):
            rows = min(batch, n - first)
            rng = np.random.default_rng(batch_seed(seed, number))
            state = np.minimum(np.searchsorted(start_cdf, rng.random(rows), side="right"), self.n_states - 1)
            symbols = np.full((rows, max_len), end, dtype=np.int64)
            done = np.zeros(rows, dtype=bool)
            for t in range(max_len):
                u_emit, u_next = rng.random(rows), rng.random(rows)
                emitted = (emit_cdf[state] <= u_emit[:, None]).sum(1).clip(max=end)
                emitted[done] = end
                symbols[:, t] = emitted
                done |= emitted == end
                if done.all():
                    break
                state = (trans_cdf[state] <= u_next[:, None]).sum(1).clip(max=self.n_states - 1)
            for row in symbols:
                stop = np.flatnonzero(row == end)
                length = int(stop[0]) if len(stop) else max_len
                out.append("".join(self.chars[i] for i in row[:length]))
        return out

    def save(self, path: str | os.PathLike) -> Path:
        """Write the parameters (and ``info``) to an ``.npz`` file, atomically."""
        meta = json.dumps({"format": FORMAT, "chars": self.chars, "info": self.info})
        with atomic_writer(path, "wb", encoding=None) as handle:
            np.savez(handle, startprob=self.startprob, transmat=self.transmat, emissionprob=self.emissionprob,
                     meta=np.array(meta))
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> HMMModel:
        """Read a model written by :meth:`save`; a one-line error for anything else."""
        target = Path(path)
        try:
            with np.load(target, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if meta.get("format") != FORMAT:
                    raise ValueError(f"format {meta.get('format')!r}")
                return cls(meta["chars"], data["startprob"], data["transmat"], data["emissionprob"], meta.get("info"))
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{target}: not a chemassay HMM, or a damaged one ({first[:200]})") from None


def train_hmm(folder: str | os.PathLike, smiles: Sequence[str], chars: Sequence[str], *, states: int = 200,
              iterations: int = 100, tol: float = 0.0, seed: int = 0, max_minutes: float | None = None,
              stop_after_iterations: int | None = None, show_progress: bool | None = None,
              report: Any = None) -> tuple[HMMModel, bool]:
    """Baum–Welch on ``smiles`` for ``iterations`` EM iterations (stopping earlier when the
    log-likelihood gains less than ``tol``), resuming from ``folder/hmm.npz``.

    Returns the model and whether training is finished (``False``: this piece hit
    ``max_minutes`` or ``stop_after_iterations``; call again to go on). ``report(text)``
    receives one line per iteration.
    """
    hmm = require("hmmlearn.hmm", "hmm", "the HMM baseline")

    target = Path(folder) / STATE_FILE
    X, lengths = _encode(smiles, chars)
    n_features = len(chars) + 1
    history: list[float] = []
    seconds = 0.0
    model = None
    if target.is_file():
        model = HMMModel.load(target)
        history = list(model.info.get("log_likelihood", []))
        seconds = float(model.info.get("train_seconds", 0.0))
        if model.n_states != states or model.chars != list(chars):
            raise UserInputError(f"{target}: holds an HMM with other settings; train into another folder")
    started = time.perf_counter()
    done_here = 0
    with progress_task("Baum-Welch", iterations, disable=None if show_progress is None else not show_progress) \
            as advance:
        advance(len(history))
        while len(history) < iterations and not _converged(history, tol):
            if stop_after_iterations is not None and done_here >= stop_after_iterations:
                break
            if max_minutes is not None and time.perf_counter() - started > max_minutes * 60:
                break
            tick = time.perf_counter()
            estimator = hmm.CategoricalHMM(n_components=states, n_features=n_features, n_iter=1, tol=0.0,
                                           random_state=seed, implementation="scaling",
                                           init_params="" if model is not None else "ste", params="ste")
            if model is not None:
                estimator.startprob_ = model.startprob
                estimator.transmat_ = model.transmat
                estimator.emissionprob_ = model.emissionprob
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimator.fit(X, lengths)
            history.append(float(estimator.monitor_.history[-1]))
            seconds += time.perf_counter() - tick
            info = {"log_likelihood": history, "iterations": len(history), "train_seconds": round(seconds, 3),
                    "n_symbols": int(len(X)), "n_sequences": int(len(lengths)), "states": states, "seed": seed}
            model = HMMModel(chars, estimator.startprob_, estimator.transmat_, estimator.emissionprob_, info)
            model.save(target)
            done_here += 1
            advance(1)
            if report is not None:
                report(f"EM iteration {len(history)}/{iterations}: log-likelihood {history[-1]:.1f} "
                       f"({history[-1] / len(X):.4f} per symbol), {time.perf_counter() - tick:.1f} s")
    if model is None:
        raise UserInputError(f"{folder}: no EM iteration was run (max_minutes too small?)")
    finished = len(history) >= iterations or _converged(history, tol)
    return model, finished


def _converged(history: list[float], tol: float) -> bool:
    return tol > 0 and len(history) >= 2 and history[-1] - history[-2] < tol
