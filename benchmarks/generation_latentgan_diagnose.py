"""Where a LatentGAN's missing diversity comes from: the heteroencoder or the GAN.

For a trained LatentGAN folder, decode ``--n`` codes of *real* training molecules (the
``latents.npy`` the GAN trained on) greedily, as the sampler decodes generated codes, and
count the distinct strings; decode the same codes at temperature 1;
and compare the spread of generated codes with the real ones. Few distinct greedy decodings
of real codes mean the decoder ignores most of the code (an undertrained autoencoder); a
generated spread far below the real one means the GAN collapsed.

    PYTHONPATH=src python benchmarks/generation_latentgan_diagnose.py runs/moses/models/latentgan-cpu-s0 \\
        --samples runs/moses/samples/latentgan_s0.txt
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a trained LatentGAN folder")
    parser.add_argument("--n", type=int, default=1000, help="real codes decoded")
    parser.add_argument("--samples", type=Path, nargs="*", default=[], help="sample files: distinct strings among their first --n")
    args = parser.parse_args(argv)

    import numpy as np
    import torch

    from chemassay.suites.generation.baselines.learned import load_learned, read_info
    from chemassay.suites.generation.baselines.neural import sample_smiles

    torch.set_num_threads(1)
    generator = load_learned("latentgan", args.model)
    sampler, vocab = generator.model, generator.vocab
    codes = torch.tensor(np.load(args.model / "latents.npy")[: args.n]).float()
    info = read_info(args.model) or {}

    class RealCodes:
        """The sampler's interface, fed the codes of real training molecules in order."""

        def __init__(self) -> None:
            self.offset = 0

        def eval(self) -> None:
            return None

        def sampling_start(self, rows, _generator, _device):
            start, self.offset = self.offset, self.offset + rows
            return sampler.autoencoder.initial_state(codes[start:start + rows])

        def sampling_step(self, tokens, state):
            return sampler.autoencoder.decode_step(tokens, state)

    greedy = sample_smiles(RealCodes(), vocab, len(codes), 0, temperature=0, show_progress=False)
    warm = sample_smiles(RealCodes(), vocab, len(codes), 0, temperature=1, show_progress=False)
    with torch.no_grad():
        fake = sampler.gan.generator(sampler.gan.noise(len(codes), torch.Generator().manual_seed(0)))
    report = {
        "model": str(args.model), "codes": len(codes),
        "training": (info.get("training") or {}),
        "greedy_decodings_distinct": len(set(greedy)),
        "temperature1_decodings_distinct": len(set(warm)),
        "real_code_std": round(float(codes.std(0).mean()), 4),
        "generated_code_std": round(float(fake.std(0).mean()), 4),
        "mean_abs_difference_of_code_means": round(float((codes.mean(0) - fake.mean(0)).abs().mean()), 4),
    }
    for path in args.samples:
        with open(path, encoding="utf-8") as handle:
            first = [line.rstrip("\n") for line in itertools.islice(handle, args.n)]
        report[f"distinct among the first {len(first)} of {path}"] = len(set(first))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
