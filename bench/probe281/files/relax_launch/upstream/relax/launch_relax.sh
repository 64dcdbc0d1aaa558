#!/usr/bin/env bash
# Relax a batch of generated candidates on every GPU of this node.
#
#   bash relax/launch_relax.sh candidates.extxyz [outdir]
#
# Stage 1: CHGNet static screen + short relaxation (1 GPU)
# Stage 2: MACE-MP-0 relaxation, one process per GPU, sharded input
# Stage 3: M3GNet cross-check on CPU workers (cheap, runs while DFT is queued)
set -euo pipefail

CANDIDATES=${1:?usage: launch_relax.sh candidates.extxyz [outdir]}
OUTDIR=${2:-relaxed_$(date +%Y%m%d_%H%M)}
MODEL=${MODEL:-medium}
FMAX=${FMAX:-0.02}
STEPS=${STEPS:-500}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
export PYTHONUNBUFFERED=1

mkdir -p "$OUTDIR"/{shards,logs}
echo "[$(date)] $CANDIDATES -> $OUTDIR on $NUM_GPUS GPU(s), model=$MODEL"

# ---- stage 1: CHGNet pre-screen -------------------------------------------
CUDA_VISIBLE_DEVICES=0 python relax/chgnet_relax.py \
    --input "$CANDIDATES" \
    --out "$OUTDIR/chgnet_prescreen.json.gz" \
    --batch-size 64 \
    --e-cut 0.3 > "$OUTDIR/logs/chgnet.log" 2>&1

python - "$OUTDIR" <<'PY'
import sys, json, gzip
from ase.io import write
from pymatgen.core import Structure
from pymatgen.io.ase import AseAtomsAdaptor
from monty.serialization import loadfn

outdir = sys.argv[1]
data = loadfn(f"{outdir}/chgnet_prescreen.json.gz")
atoms = []
for i, r in enumerate(data["relaxed"]):
    a = AseAtomsAdaptor.get_atoms(Structure.from_dict(r["structure"]))
    a.info["index"] = i
    if r["magmoms"] is not None:
        a.set_initial_magnetic_moments(r["magmoms"])
    atoms.append(a)
write(f"{outdir}/prescreened.extxyz", atoms, format="extxyz")
print(f"{len(atoms)} structures survive the CHGNet screen")
PY

# ---- stage 2: MACE relaxation, one shard per GPU ---------------------------
N=$(grep -c '^[0-9]' "$OUTDIR/prescreened.extxyz" || true)
python - "$OUTDIR" "$NUM_GPUS" <<'PY'
import sys
from ase.io import read, write
outdir, n = sys.argv[1], int(sys.argv[2])
frames = read(f"{outdir}/prescreened.extxyz", index=":")
for k in range(n):
    write(f"{outdir}/shards/shard_{k}.extxyz", frames[k::n], format="extxyz")
PY

for ((i = 0; i < NUM_GPUS; i++)); do
    CUDA_VISIBLE_DEVICES=$i python relax/relax_mace.py \
        --input "$OUTDIR/shards/shard_$i.extxyz" \
        --out "$OUTDIR/shards/relaxed_$i.extxyz" \
        --gpu-ids 0 \
        --model "$MODEL" \
        --cueq \
        --fmax "$FMAX" \
        --steps "$STEPS" \
        --phase-diagram data/mp_2023_02_pd.json \
        > "$OUTDIR/logs/mace_$i.log" 2>&1 &
done
wait
echo "[$(date)] MACE stage finished"

python - "$OUTDIR" "$NUM_GPUS" <<'PY'
import sys
from ase.io import read, write
outdir, n = sys.argv[1], int(sys.argv[2])
frames = []
for k in range(n):
    frames += read(f"{outdir}/shards/relaxed_{k}.extxyz", index=":")
write(f"{outdir}/relaxed_mace.extxyz", frames, format="extxyz")
print(f"merged {len(frames)} relaxed structures")
PY

# ---- stage 3: M3GNet cross-check on CPU -------------------------------------
python relax/matgl_relax.py \
    --input "$OUTDIR/relaxed_mace.extxyz" \
    --out "$OUTDIR/m3gnet_crosscheck.csv" \
    --device cpu > "$OUTDIR/logs/m3gnet.log" 2>&1 &

echo "[$(date)] done; M3GNet cross-check running in background (pid $!)"
