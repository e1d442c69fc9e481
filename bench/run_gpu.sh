#!/usr/bin/env bash
# GPU checks of plexnet on a machine with an NVIDIA GPU and no network (the device
# machine): install the carried wheels (.whl/) and this repository's packages offline,
# then run the GPU tests of plexnet-device-cuda and plexnet-ops-cudnn and the GPU
# benchmark (plexnet vs PyTorch). Logs go to $OUT (or /tmp/plexnet-gpu-out).
#
#   bash bench/run_gpu.sh            # everything
#   bash bench/run_gpu.sh tests      # only the tests
#   bash bench/run_gpu.sh bench      # only the benchmark
#
# What it expects on the machine (the 'cuda' image: Python 3.12, PyTorch with
# nvidia-cudnn-cu13, cupy-cuda13x, setuptools, wheel, pytest, pluggy, numpy) and in
# .whl/: nvidia-cudnn-frontend (cp312 manylinux x86_64). See plugins/ops-cudnn/README.md.
set -uo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
OUT=${OUT:-/tmp/plexnet-gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

setup() {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || echo "nvidia-smi failed"
    $PY -c "import sys; print('python', sys.version.split()[0], sys.executable)"
    if ls .whl/*.whl >/dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
            || { echo "installing the carried wheels failed"; return 1; }
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    else
        echo "no .whl/ folder: nvidia-cudnn-frontend must already be installed"
    fi
    $PY -m pip install -q --no-index --no-deps --no-build-isolation \
        -e . -e plugins/ops-basic -e plugins/device-cuda -e plugins/ops-cudnn \
        || { echo "installing the repository's packages failed"; return 1; }
    # the cuDNN library of the image's nvidia-cudnn wheel (PyTorch's), for the frontend's dlopen
    CUDNN_DIR=$($PY - <<'EOF'
import glob, os, site
for s in site.getsitepackages() + [site.getusersitepackages()]:
    hits = glob.glob(os.path.join(s, "nvidia", "**", "libcudnn.so.9"), recursive=True)
    if hits:
        print(os.path.dirname(hits[0]))
        break
EOF
)
    if [ -n "$CUDNN_DIR" ]; then
        export LD_LIBRARY_PATH=$CUDNN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        echo "libcudnn.so.9 from $CUDNN_DIR"
    else
        echo "no libcudnn.so.9 found in site-packages; relying on the system linker path"
    fi
    $PY -m pip list 2>/dev/null | grep -i -E "^(cupy|nvidia-cudnn|torch |numpy |plexnet|pluggy|pytest )" || true
    $PY -m plexnet_ops_cudnn
    plexnet plugins || $PY -m plexnet.cli plugins || true
}

setup 2>&1 | tee "$OUT/setup.log"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "setup failed (see $OUT/setup.log)"; exit 1; }
# setup runs in a subshell of the pipe: set the environment again here
[ -d /tmp/site ] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
CUDNN_DIR=$(grep '^libcudnn.so.9 from ' "$OUT/setup.log" | sed 's/^libcudnn.so.9 from //')
[ -n "$CUDNN_DIR" ] && export LD_LIBRARY_PATH=$CUDNN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

rc=0
if [ "$WHAT" = all ] || [ "$WHAT" = tests ]; then
    $PY -m pytest -q -rs -p no:cacheprovider --timeout 900 plugins/device-cuda plugins/ops-cudnn \
        --junitxml "$OUT/pytest.xml" 2>&1 | tee "$OUT/pytest.log"
    rc=${PIPESTATUS[0]}
fi
if [ "$WHAT" = all ] || [ "$WHAT" = bench ]; then
    $PY bench/gpu_bench.py 2>&1 | tee "$OUT/bench.log"
fi
exit $rc
