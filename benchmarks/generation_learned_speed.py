"""Training and sampling throughput of the learned MOSES generators on CPU, against the reference.

For each model: **training** molecules/s (median of ``--repeats`` timings of ``--steps``
optimizer steps on real MOSES batches, the model's own loss, ``--threads`` torch threads)
and **sampling** molecules/s (``--n`` molecules, chemassay's batched sampler). For CharRNN,
VAE and AAE the same weights are also sampled by the MOSES reference code (molsets 0.3.1,
installed without dependencies into a throwaway venv by ``generation_common``; its CharRNN
samples row by row in Python), and the ratio is printed. LatentGAN's reference needs the
Keras/TensorFlow ``ddc_pub`` heteroencoder and the HMM's pomegranate 0.x; neither installs
here, so those two are measured alone. Models: trained folders from
``generation_reproduce_tables.py`` (``--models-dir``) or fresh weights of ``--size``.

    python benchmarks/generation_learned_speed.py --models-dir /work/runs13/models --n 2000
    python benchmarks/generation_learned_speed.py --size tiny --n 500 --skip-reference
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import MOLSETS_SHIMS, ensure_reference_venv  # noqa: E402

# Runs inside the reference venv: the MOSES models with chemassay's weights (renamed), sampled
# with the reference's own sample(); torch seeded once. After the shared shims
# (generation_common.MOLSETS_SHIMS) it gives molsets' uint8 masks as bool; no arithmetic changes.
REFERENCE_SAMPLER = MOLSETS_SHIMS + r'''
import torch
torch.set_num_threads(int(sys.argv[3]))
args = json.load(open(sys.argv[1]))
from moses.utils import CharVocab, OneHotVocab
import moses.aae.model, moses.vae.model
# molsets 0.3.1 samples with uint8 masks, which torch 2 refuses; the same masks as bool.
proxy = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
proxy.uint8 = torch.bool
moses.vae.model.torch = moses.aae.model.torch = proxy
out = {}
for kind, spec in args.items():
    chars = spec["vocab"]
    if kind == "charrnn":
        from moses.char_rnn.model import CharRNN as Model
        vocab = CharVocab(chars)
    elif kind == "vae":
        from moses.vae.model import VAE as Model
        vocab = OneHotVocab(chars)
    else:
        from moses.aae.model import AAE as Model
        vocab = CharVocab(chars)
    model = Model(vocab, types.SimpleNamespace(**spec["config"]))
    state = torch.load(spec["weights"], map_location="cpu")
    # strict=False: the reference registers the same modules twice (ModuleList aliases such as
    # VAE.vae / AAE.encoder.embedding_layer); every tensor of ours must still find its place.
    result = model.load_state_dict(state, strict=False)
    assert not result.unexpected_keys, result.unexpected_keys
    own = model.state_dict()
    assert all(torch.equal(own[k], v) for k, v in state.items())
    model.eval()
    torch.manual_seed(0)
    start = time.perf_counter()
    done = 0
    samples = []
    while done < spec["n"]:
        rows = min(spec["batch"], spec["n"] - done)
        samples += model.sample(rows, max_len=100) if kind != "charrnn" else model.sample(rows, max_length=100)
        done += rows
    out[kind] = {"seconds": time.perf_counter() - start, "n": len(samples)}
json.dump(out, open(sys.argv[2], "w"))
'''

RENAMES = {
    "charrnn": {"embedding.": "embedding_layer.", "lstm.": "lstm_layer.", "head.": "linear_layer."},
    "vae": {"embedding.": "x_emb.", "encoder.": "encoder_rnn.", "decoder.": "decoder_rnn."},
    "aae": {"embedding.": "embeddings.", "encoder.": "encoder.lstm_layer.", "to_latent.": "encoder.linear_layer.",
            "latent_to_cell.": "decoder.latent2hidden_layer.", "decoder.": "decoder.lstm_layer.",
            "head.": "decoder.linear_layer.", "discriminator.": "discriminator.layers_seq."},
}


def reference_config(kind: str, config: dict) -> dict:
    """The reference model's constructor config for chemassay's configuration."""
    if kind == "charrnn":
        return {"hidden": config["hidden"], "num_layers": config["layers"], "dropout": config["dropout"]}
    if kind == "vae":
        return {"q_cell": "gru", "q_bidir": config["enc_bidirectional"], "q_d_h": config["enc_hidden"],
                "q_n_layers": config["enc_layers"], "q_dropout": config["enc_dropout"], "d_cell": "gru",
                "d_n_layers": config["dec_layers"], "d_dropout": config["dec_dropout"], "d_z": config["latent"],
                "d_d_h": config["dec_hidden"], "freeze_embeddings": False}
    return {"embedding_size": config["embedding"], "encoder_hidden_size": config["enc_hidden"],
            "encoder_num_layers": config["enc_layers"], "encoder_bidirectional": config["enc_bidirectional"],
            "encoder_dropout": 0.0, "decoder_hidden_size": config["dec_hidden"],
            "decoder_num_layers": config["dec_layers"], "decoder_dropout": 0.0, "latent_size": config["latent"],
            "discriminator_layers": config["disc_layers"]}


def reference_state(kind: str, state: dict) -> dict:
    renamed = {}
    for key, value in state.items():
        for ours, theirs in RENAMES[kind].items():
            if key.startswith(ours):
                key = theirs + key[len(ours):]
                break
        if kind == "aae" and key.startswith("decoder.embedding") or kind == "aae" and key.startswith(
                "encoder.embedding"):
            continue
        renamed[key] = value
    if kind == "aae":  # the reference's encoder and decoder share the embedding module by reference
        renamed["encoder.embedding_layer.weight"] = renamed["embeddings.weight"]
        renamed["decoder.embedding_layer.weight"] = renamed["embeddings.weight"]
        # its discriminator numbers Linear layers linear_0, linear_1...; ours are Sequential indexes
        layers = sorted({k.split(".")[2] for k in renamed if k.startswith("discriminator.layers_seq.")}, key=int)
        for number, index in enumerate(layers):
            for suffix in ("weight", "bias"):
                renamed[f"discriminator.layers_seq.linear_{number}.{suffix}"] = renamed.pop(
                    f"discriminator.layers_seq.{index}.{suffix}")
    return renamed


def load(kind: str, args):
    """A generator of ``kind``: the trained folder under --models-dir, else fresh weights."""
    from chemassay.contract.errors import UserInputError
    from chemassay.suites.generation.baselines import learned

    if args.models_dir:
        folder = Path(args.models_dir) / f"{kind}-{args.size}-s0"
        if (folder / "model.json").is_file():
            try:
                return learned.load_learned(kind, folder), True
            except UserInputError as exc:  # a run that never finished an epoch: time fresh weights
                print(f"{kind}: {exc}; timing fresh weights instead", file=sys.stderr)
    import chemassay

    smiles = chemassay.load_dataset("moses", part="train", limit=400)
    with tempfile.TemporaryDirectory() as tmp:
        run = learned.RunControls(seed=0, device="cpu", threads=args.threads, show_progress=False)
        options = ({"size": args.size, "epochs": "1", "steps": "1", "val": "50"} if kind != "hmm"
                   else {"size": args.size, "iterations": "1"})
        if kind == "latentgan":
            options.update({"gan_epochs": "1", "gan_steps": "1", "gan_train": "64"})
        generator, _ = learned.train_learned(kind, Path(tmp) / kind, smiles, options=options, run=run)
        return generator, False


def train_rate(kind: str, generator, args) -> float | None:
    """Median molecules/s of training steps of ``kind`` on real MOSES batches (fresh copy)."""
    import torch

    import chemassay
    from chemassay.suites.generation.baselines import learned
    from chemassay.suites.generation.baselines.neural import CharVocab, pad_collate

    if kind == "hmm":
        return None
    info = generator.info
    vocab = CharVocab(info["vocab"])
    batch_size = info["training"]["batch_size"]
    smiles = chemassay.load_dataset("moses", part="train", limit=batch_size * (args.steps + 1))
    collate = pad_collate(vocab.pad)
    batches = [collate([vocab.encode(s) for s in smiles[i * batch_size:(i + 1) * batch_size]])
               for i in range(args.steps)]
    torch.manual_seed(0)
    if kind == "latentgan":
        module = learned._latentgan_modules(info, vocab)[0]
        pairs = learned._PairDataset(smiles, vocab, 0)
        collate_pairs = learned._pair_collate(vocab.pad)
        batches = [collate_pairs([pairs[j] for j in range(i * batch_size, (i + 1) * batch_size)])
                   for i in range(args.steps)]
    else:
        module = learned._module_for(kind, info, vocab)
    module.train()
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-4)

    def loss_of(batch):
        if kind == "vae":
            kl, recon = module._losses(batch)
            return kl * 0.01 + recon
        if kind == "aae":
            return module._reconstruction(*batch, module.encode(*batch))
        return module._loss(batch)

    rates = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for batch in batches:
            optimizer.zero_grad()
            loss_of(batch).backward()
            optimizer.step()
        rates.append(args.steps * batch_size / (time.perf_counter() - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="charrnn,vae,aae,latentgan,hmm")
    parser.add_argument("--models-dir", help="folder of trained models (KIND-SIZE-s0)")
    parser.add_argument("--size", default="cpu", choices=["tiny", "cpu", "paper"])
    parser.add_argument("--n", type=int, default=2000, help="molecules to sample")
    parser.add_argument("--batch", type=int, default=512, help="sampling batch (both tools)")
    parser.add_argument("--steps", type=int, default=10, help="training steps per timing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--venv", help="reference venv location (kept; default: temporary)")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    kinds = [k.strip() for k in args.models.split(",") if k.strip()]
    rows = {}
    reference_jobs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            generator, trained = load(kind, args)
            generator.sampling["batch"] = args.batch if kind != "hmm" else max(args.batch, 4096)
            times = []
            for repeat in range(args.repeats):
                start = time.perf_counter()
                samples = generator.sample(args.n, seed=repeat)
                times.append(time.perf_counter() - start)
            valid = _valid_fraction(samples)
            rows[kind] = {"trained": trained, "sample_per_s": args.n / statistics.median(times), "valid": valid,
                          "train_per_s": train_rate(kind, generator, args)}
            if kind in RENAMES and not args.skip_reference:
                weights = Path(tmp) / f"{kind}.pt"
                torch.save(reference_state(kind, generator.model.state_dict()), weights)
                reference_jobs[kind] = {"vocab": generator.info["vocab"], "weights": str(weights),
                                        "config": reference_config(kind, generator.info["config"]),
                                        "n": args.n, "batch": args.batch}
            print(json.dumps({kind: rows[kind]}), flush=True)
        if reference_jobs:
            venv = Path(args.venv) if args.venv else Path(tmp) / "venv"
            python = ensure_reference_venv(venv, quiet=True)
            script, jobs, result = Path(tmp) / "ref.py", Path(tmp) / "jobs.json", Path(tmp) / "out.json"
            script.write_text(REFERENCE_SAMPLER)
            for kind, job in reference_jobs.items():  # one at a time: a crash of one is reported, not fatal
                jobs.write_text(json.dumps({kind: job}))
                done = subprocess.run([str(python), str(script), str(jobs), str(result), str(args.threads)],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
                    rows[kind]["reference_error"] = last
                    print(f"{kind}: the reference sampler failed: {last}", file=sys.stderr)
                    continue
                for name, value in json.loads(result.read_text()).items():
                    rows[name]["reference_sample_per_s"] = value["n"] / value["seconds"]
    print(f"\n{args.n} samples (batch {args.batch}), {args.steps} training steps x {args.repeats}, "
          f"{args.threads} thread(s), CPU")
    print("| model | weights | train molecules/s | sample molecules/s | reference sample molecules/s | ratio | valid |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind, row in rows.items():
        reference = row.get("reference_sample_per_s")
        ratio = f"×{row['sample_per_s'] / reference:.1f}" if reference else (
            "reference crashed" if row.get("reference_error") else "—")
        train = f"{row['train_per_s']:.0f}" if row["train_per_s"] else "— (EM)"
        print(f"| {kind} | {'trained' if row['trained'] else 'untrained'} | {train} | {row['sample_per_s']:.0f} | "
              f"{f'{reference:.0f}' if reference else '—'} | {ratio} | {row['valid']:.3f} |")
    return 0


def _valid_fraction(samples: list[str]) -> float:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    return sum(Chem.MolFromSmiles(s) is not None for s in samples if s) / max(len(samples), 1)


if __name__ == "__main__":
    raise SystemExit(main())
