#!/usr/bin/env bash
# Runs TS2Vec on all 128 UCR datasets, spreading the runs over the available GPUs
# (one process per GPU at a time). Usage:
#   bash scripts/ucr_multi_gpu.sh [NUM_GPUS] [SEED]
# Results end up in training/<dataset>__UCR_<date>/eval_res.pkl

set -euo pipefail

NUM_GPUS=${1:-$(nvidia-smi --list-gpus | wc -l)}
SEED=${2:-42}
LOG_DIR=logs/ucr_seed${SEED}
mkdir -p "${LOG_DIR}"

export OMP_NUM_THREADS=8
export CUDA_DEVICE_ORDER=PCI_BUS_ID

DATASETS=(
  ACSF1 Adiac AllGestureWiimoteX AllGestureWiimoteY AllGestureWiimoteZ ArrowHead BME Beef BeetleFly BirdChicken
  CBF Car Chinatown ChlorineConcentration CinCECGTorso Coffee Computers CricketX CricketY CricketZ Crop
  DiatomSizeReduction DistalPhalanxOutlineAgeGroup DistalPhalanxOutlineCorrect DistalPhalanxTW DodgerLoopDay
  DodgerLoopGame DodgerLoopWeekend ECG200 ECG5000 ECGFiveDays EOGHorizontalSignal EOGVerticalSignal Earthquakes
  ElectricDevices EthanolLevel FaceAll FaceFour FacesUCR FiftyWords Fish FordA FordB FreezerRegularTrain
  FreezerSmallTrain Fungi GestureMidAirD1 GestureMidAirD2 GestureMidAirD3 GesturePebbleZ1 GesturePebbleZ2
  GunPoint GunPointAgeSpan GunPointMaleVersusFemale GunPointOldVersusYoung Ham HandOutlines Haptics Herring
  HouseTwenty InlineSkate InsectEPGRegularTrain InsectEPGSmallTrain InsectWingbeatSound ItalyPowerDemand
  LargeKitchenAppliances Lightning2 Lightning7 Mallat Meat MedicalImages MelbournePedestrian
  MiddlePhalanxOutlineAgeGroup MiddlePhalanxOutlineCorrect MiddlePhalanxTW MixedShapesRegularTrain
  MixedShapesSmallTrain MoteStrain NonInvasiveFetalECGThorax1 NonInvasiveFetalECGThorax2 OSULeaf OliveOil
  PLAID PhalangesOutlinesCorrect Phoneme PickupGestureWiimoteZ PigAirwayPressure PigArtPressure PigCVP Plane
  PowerCons ProximalPhalanxOutlineAgeGroup ProximalPhalanxOutlineCorrect ProximalPhalanxTW
  RefrigerationDevices Rock ScreenType SemgHandGenderCh2 SemgHandMovementCh2 SemgHandSubjectCh2
  ShakeGestureWiimoteZ ShapeletSim ShapesAll SmallKitchenAppliances SmoothSubspace SonyAIBORobotSurface1
  SonyAIBORobotSurface2 StarLightCurves Strawberry SwedishLeaf Symbols SyntheticControl ToeSegmentation1
  ToeSegmentation2 Trace TwoLeadECG TwoPatterns UMD UWaveGestureLibraryAll UWaveGestureLibraryX
  UWaveGestureLibraryY UWaveGestureLibraryZ Wafer Wine WordSynonyms Worms WormsTwoClass Yoga
)

run_on_gpu() {
  local gpu=$1
  shift
  for ds in "$@"; do
    echo "[gpu ${gpu}] ${ds}"
    CUDA_VISIBLE_DEVICES=${gpu} python -u train.py "${ds}" UCR --loader UCR --batch-size 8 --repr-dims 320 \
      --max-threads 8 --seed "${SEED}" --gpu 0 --eval > "${LOG_DIR}/${ds}.log" 2>&1 \
      || echo "[gpu ${gpu}] ${ds} FAILED (see ${LOG_DIR}/${ds}.log)"
  done
}

# split the dataset list into NUM_GPUS interleaved shards
for ((g = 0; g < NUM_GPUS; g++)); do
  shard=()
  for ((i = g; i < ${#DATASETS[@]}; i += NUM_GPUS)); do
    shard+=("${DATASETS[$i]}")
  done
  run_on_gpu "${g}" "${shard[@]}" &
done
wait

echo "all done, collecting results"
python - <<'EOF'
import glob, pickle
rows = []
for fn in sorted(glob.glob('training/*__UCR_*/eval_res.pkl')):
    ds = fn.split('/')[1].split('__')[0]
    with open(fn, 'rb') as f:
        res = pickle.load(f)
    rows.append((ds, res['acc']))
for ds, acc in rows:
    print(f'{ds:35s} {acc:.4f}')
print('mean acc:', sum(a for _, a in rows) / max(len(rows), 1))
EOF
