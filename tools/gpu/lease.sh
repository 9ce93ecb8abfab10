#!/usr/bin/env bash
# Every GPU check of the kit in one command, for one short lease of an offline GPU machine.
#
#   bash tools/gpu/lease.sh BUNDLE.tgz RESULTS_DIR [SECONDS]
#
# Run from the repository root on the GPU machine. BUNDLE.tgz comes from
# `python tools/gpu/wheels.py --bundle .gpu/site.tgz` (the packages the machine's image lacks).
# It installs the bundle into the machine's own Python (the grader's sandboxed kernels start
# with `python -I`, which ignores PYTHONPATH), installs the kit editable, writes the stand-ins
# once, then runs at the same time, each stopped after SECONDS (default 420):
#   - tools/gpu/smoke.py, one process per assignment (full profile, graded; grpo_format's reference
#     graded three times, for the seconds per submission once the grader's evaluator is up);
#   - bench/bench_grpo_format.py --profile "$bench_profile" (notebook vs TRL);
#   - bench/bench_math_grpo.py --profile "$bench_profile";
#   - bench/bench_evaluator_groups.py (grpo_format's adapters measured alone and in groups of 8 and
#     16: seconds per adapter, GPU memory), its log inside results.tgz.
# They share the GPU, so their timings are upper bounds (the logs say what ran beside them).
# RESULTS_DIR gets at most 8 files: lease.log, one log per job, results.tgz (smoke reports,
# grades, autograde logs) -- the device tool returns 8 files at most.
# LEASE_DRY_RUN=1 tests this script on a CPU (shrunken stand-ins, tiny-profile benches).
# LEASE_SETUP_ONLY=1 stops once the bundle is installed and the stand-ins are written, for a
# follow-up command of your own in the same call; it then needs
#   export HF_HOME=/tmp/gpu-hub/hf COURSE_MATH_SOURCE=/tmp/gpu-hub/math HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
set -u
dry=${LEASE_DRY_RUN:-}
smoke_flags=(); bench_profile=full
[ -n "$dry" ] && { smoke_flags=(--cpu-dry-run); bench_profile=tiny; }
bundle=$1
results=$2
budget=${3:-420}
mkdir -p "$results"
exec > >(tee -a "$results/lease.log") 2>&1
echo "lease: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1)"
python=$(command -v python3)
site=$($python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
bin=$(dirname "$($python -c 'import sys; print(sys.executable)')")
tar xzf "$bundle" -C /tmp
for dist in /tmp/gpusite/site/*.dist-info; do  # one version of each package: drop the image's copy first
  name=$(basename "$dist" | sed 's/-[0-9].*//' | tr 'A-Z-' 'a-z_')
  for old in "$site"/*.dist-info; do
    [ "$(basename "$old" | sed 's/-[0-9].*//' | tr 'A-Z-' 'a-z_')" = "$name" ] || continue
    while read -r top; do rm -rf "${site:?}/$top"; done < <(cat "$old/top_level.txt" 2>/dev/null || echo "$name")
    rm -rf "$old"
  done
done
cp -r /tmp/gpusite/site/. "$site/"
mkdir -p /usr/local/share/jupyter && cp -r /tmp/gpusite/share/jupyter/. /usr/local/share/jupyter/
for tool in alembic:alembic.config jupyter:jupyter_core.command nbgrader:nbgrader.apps.nbgraderapp; do
  printf '#!%s\nimport sys\nfrom %s import main\nsys.exit(main())\n' "$python" "${tool#*:}" > "$bin/${tool%%:*}"
  chmod +x "$bin/${tool%%:*}"
done
$python -m pip install -q --no-index --no-deps --no-build-isolation -e . || {
  echo "lease: editable install failed: the repository goes on sys.path through a .pth file"
  echo "$PWD" > "$site/course_kit_repo.pth"; }
$python - <<'EOF'
import importlib, importlib.metadata, torch
print("lease: torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")
for name in ("transformers", "peft", "accelerate", "bitsandbytes", "datasets", "nbgrader", "trl", "math_verify"):
    try:
        importlib.import_module(name); print(f"lease: {name} {importlib.metadata.version(name.replace('_', '-'))}")
    except Exception as error:
        print(f"lease: {name} NOT importable: {type(error).__name__}: {error}")
EOF
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg PYTHONUNBUFFERED=1
hub=/tmp/gpu-hub
started=$SECONDS
$python tools/gpu/smoke.py --hub "$hub" --out /tmp/gpu-prepare --prepare-only "${smoke_flags[@]}" || exit 1
echo "lease: stand-ins ready after $((SECONDS - started)) s"
[ -n "${LEASE_SETUP_ONLY:-}" ] && exit 0
export HF_HOME=$hub/hf COURSE_MATH_SOURCE=$hub/math
(while sleep 20; do echo "gpu: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)"; done) &
monitor=$!
pids=()
ids=$($python -c "from autograder.manifest import load_assignments; print(*(a.id for a in load_assignments()))")
for id in $ids; do  # every assignment the manifests declare (no list kept here)
  steps=2; [ "$id" = math_grpo ] && steps=1  # math_grpo trains ~10 runs (main, ablations, P13, P14, P16)
  copies=1; [ "$id" = grpo_format ] && copies=3  # issue 21's goal: <= 15 s per grpo_format submission
  timeout "$budget" $python tools/gpu/smoke.py --hub "$hub" --out "/tmp/gpu-smoke/$id" --assignment "$id" \
    --max-steps "$steps" --max-eval 16 --copies "$copies" "${smoke_flags[@]}" > "$results/smoke-$id.log" 2>&1 &
  pids+=($!)
done
timeout "$budget" $python bench/bench_grpo_format.py --profile "$bench_profile" --steps 2 > "$results/bench_grpo_format.log" 2>&1 &
pids+=($!)
timeout "$budget" $python bench/bench_math_grpo.py --profile "$bench_profile" --steps 1 > "$results/bench_math_grpo.log" 2>&1 &
pids+=($!)
adapters=30; [ -n "$dry" ] && adapters=4
mkdir -p /tmp/gpu-smoke
timeout "$budget" $python bench/bench_evaluator_groups.py --profile "$bench_profile" --adapters "$adapters" \
  --groups 1 8 16 > /tmp/gpu-smoke/bench_evaluator_groups.log 2>&1 &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; echo "lease: job $pid exit $?"; done
kill "$monitor" 2>/dev/null
echo "lease: jobs done after $((SECONDS - started)) s"
tar czf "$results/results.tgz" --exclude='*.safetensors' --exclude='*.bin' --exclude='*/submissions/*/*/artifacts' \
  -C /tmp gpu-smoke 2>/dev/null
ls -la "$results"
