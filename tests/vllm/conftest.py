"""tests/vllm runs only under `make test-vllm` (infra/test_vllm.sh), which starts the real vLLM
server and sets RECALLFLOW_VLLM_BASE_URL. Without it these modules are not collected at all,
so the default `make test` neither runs nor skips them."""

from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("RECALLFLOW_VLLM_BASE_URL") else ["test_vllm_e2e.py", "test_vllm_flow_replay.py"]
