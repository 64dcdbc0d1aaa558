#!/usr/bin/env bash
# Set bash to 'debug' mode, it will exit on :
# -e 'error', -u 'undefined variable', -o ... 'error in pipeline', -x 'print commands',
set -e
set -u
set -o pipefail

log() {
    local fname=${BASH_SOURCE[1]##*/}
    echo -e "$(date '+%Y-%m-%dT%H:%M:%S') (${fname}:${BASH_LINENO[0]}:${FUNCNAME[1]}) $*"
}
min() {
  local a b
  a=$1
  for b in "$@"; do
      if [ "${b}" -le "${a}" ]; then
          a="${b}"
      fi
  done
  echo "${a}"
}
SECONDS=0

# General configuration
stage=1              # Processes starts from the specified stage.
stop_stage=13        # Processes is stopped at the specified stage.
ngpu=4               # The number of gpus ("0" uses cpu, otherwise use gpu).
num_nodes=1          # The number of nodes.
nj=32                # The number of parallel jobs.
inference_nj=32      # The number of parallel jobs in decoding.
gpu_inference=false  # Whether to perform gpu decoding.
dumpdir=dump         # Directory to dump features.
expdir=exp           # Directory to save experiments.
python=python3       # Specify python to execute espnet commands.

# Data preparation related
local_data_opts= # The options given to local/data.sh.

# Feature extraction related
feats_type=raw       # Feature type (raw or fbank_pitch).
audio_format=flac    # Audio format: wav, flac, wav.ark, flac.ark  (only in feats_type=raw).
fs=16k               # Sampling rate.
min_wav_duration=0.1 # Minimum duration in second.
max_wav_duration=20  # Maximum duration in second.

# Tokenization related
token_type=bpe      # Tokenization type (char or bpe).
nbpe=5000           # The number of BPE vocabulary.
bpemode=unigram     # Mode of BPE (unigram or bpe).

# ASR model related
asr_tag=conformer_lr2e-3_warmup15k_amp_nondeterministic
asr_config=conf/tuning/train_asr_conformer_lr2e-3_warmup15k_amp_nondeterministic.yaml
inference_config=conf/decode_asr.yaml
asr_args=            # Arguments for asr model training, e.g., "--max_epoch 10".
inference_asr_model=valid.acc.ave.pth

train_set="train_clean_100"
valid_set="dev"
test_sets="test_clean test_other dev_clean dev_other"

# Pin the job to the first four GPUs of the box; the scheduler on our
# cluster does not set this for interactive runs.
export CUDA_VISIBLE_DEVICES=0,1,2,3
# InfiniBand is not wired on the single-node training boxes.
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1

. utils/parse_options.sh

. ./path.sh
. ./cmd.sh

if [ "${ngpu}" -gt 0 ]; then
    n_visible=$(nvidia-smi -L | wc -l)
    if [ "${n_visible}" -lt "${ngpu}" ]; then
        log "Error: --ngpu ${ngpu} but only ${n_visible} GPUs are visible on $(hostname)"
        exit 1
    fi
fi

data_feats=${dumpdir}/raw
asr_exp="${expdir}/asr_${asr_tag}"
asr_stats_dir="${expdir}/asr_stats_${feats_type}_${token_type}${nbpe}"
bpedir="data/token_list/bpe_${bpemode}${nbpe}"
bpemodel="${bpedir}"/bpe.model
token_list="${bpedir}"/tokens.txt

if [ ${stage} -le 1 ] && [ ${stop_stage} -ge 1 ]; then
    log "Stage 1: Data preparation for data/${train_set}, data/${valid_set}, etc."
    # [Task dependent] Need to create data.sh for new corpus
    local/data.sh ${local_data_opts}
fi

if [ ${stage} -le 3 ] && [ ${stop_stage} -ge 3 ]; then
    log "Stage 3: Format wav.scp: data/ -> ${data_feats}"
    for dset in "${train_set}" "${valid_set}" ${test_sets}; do
        _suf="/org"
        [ "${dset}" != "${train_set}" ] && [ "${dset}" != "${valid_set}" ] && _suf=""
        utils/copy_data_dir.sh --validate_opts --non-print data/"${dset}" "${data_feats}${_suf}/${dset}"
        # shellcheck disable=SC2086
        scripts/audio/format_wav_scp.sh --nj "${nj}" --cmd "${train_cmd}" \
            --audio-format "${audio_format}" --fs "${fs}" \
            "data/${dset}/wav.scp" "${data_feats}${_suf}/${dset}"
        echo "${feats_type}" > "${data_feats}${_suf}/${dset}/feats_type"
    done
fi

if [ ${stage} -le 5 ] && [ ${stop_stage} -ge 5 ]; then
    log "Stage 5: Generate token_list from ${data_feats}/${train_set}/text using BPE"
    mkdir -p "${bpedir}"
    # shellcheck disable=SC2002
    cat ${data_feats}/${train_set}/text | cut -f 2- -d" "  > "${bpedir}"/train.txt
    spm_train \
        --input="${bpedir}"/train.txt \
        --vocab_size="${nbpe}" \
        --model_type="${bpemode}" \
        --model_prefix="${bpedir}"/bpe \
        --character_coverage=1.0 \
        --input_sentence_size=100000000
    {
    echo "<blank>"
    echo "<unk>"
    tail -n +4 "${bpedir}/bpe.vocab" | awk '{ print $1 }'
    echo "<sos/eos>"
    } > "${token_list}"
fi

if [ ${stage} -le 10 ] && [ ${stop_stage} -ge 10 ]; then
    _asr_train_dir="${data_feats}/${train_set}"
    _asr_valid_dir="${data_feats}/${valid_set}"
    log "Stage 10: ASR collect stats: train_set=${_asr_train_dir}, valid_set=${_asr_valid_dir}"
    _logdir="${asr_stats_dir}/logdir"
    mkdir -p "${_logdir}"
    # shellcheck disable=SC2086
    ${train_cmd} JOB=1:"${nj}" "${_logdir}"/stats.JOB.log \
        ${python} -m espnet2.bin.asr_train \
            --collect_stats true \
            --use_preprocessor true \
            --bpemodel "${bpemodel}" \
            --token_type "${token_type}" \
            --token_list "${token_list}" \
            --train_data_path_and_name_and_type "${_asr_train_dir}/wav.scp,speech,sound" \
            --valid_data_path_and_name_and_type "${_asr_valid_dir}/wav.scp,speech,sound" \
            --output_dir "${_logdir}/stats.JOB" \
            --config "${asr_config}"
    ${python} -m espnet2.bin.aggregate_stats_dirs --input_dir "${_logdir}/stats.1" --output_dir "${asr_stats_dir}"
fi

if [ ${stage} -le 11 ] && [ ${stop_stage} -ge 11 ]; then
    _asr_train_dir="${data_feats}/${train_set}"
    _asr_valid_dir="${data_feats}/${valid_set}"
    log "Stage 11: ASR Training: train_set=${_asr_train_dir}, valid_set=${_asr_valid_dir}"

    mkdir -p "${asr_exp}"
    jobname="$(basename ${asr_exp})"
    log "ASR training started... log: '${asr_exp}/train.log'"

    # NOTE(kamo): --fold_length is used only if --batch_type=folded and it's ignored in the other case
    # shellcheck disable=SC2086
    ${python} -m espnet2.bin.launch \
        --cmd "${cuda_cmd} --name ${jobname}" \
        --log "${asr_exp}"/train.log \
        --ngpu "${ngpu}" \
        --num_nodes "${num_nodes}" \
        --init_file_prefix "${asr_exp}"/.dist_init_ \
        --multiprocessing_distributed true -- \
        ${python} -m espnet2.bin.asr_train \
            --use_preprocessor true \
            --bpemodel "${bpemodel}" \
            --token_type "${token_type}" \
            --token_list "${token_list}" \
            --train_data_path_and_name_and_type "${_asr_train_dir}/wav.scp,speech,sound" \
            --train_data_path_and_name_and_type "${_asr_train_dir}/text,text,text" \
            --valid_data_path_and_name_and_type "${_asr_valid_dir}/wav.scp,speech,sound" \
            --valid_data_path_and_name_and_type "${_asr_valid_dir}/text,text,text" \
            --train_shape_file "${asr_stats_dir}/train/speech_shape" \
            --valid_shape_file "${asr_stats_dir}/valid/speech_shape" \
            --resume true \
            --use_amp true \
            --dist_backend nccl \
            --fold_length 80000 \
            --output_dir "${asr_exp}" \
            --config "${asr_config}" \
            --frontend_conf fs="${fs}" \
            ${asr_args}
fi

if [ ${stage} -le 12 ] && [ ${stop_stage} -ge 12 ]; then
    log "Stage 12: Decoding: training_dir=${asr_exp}"

    if ${gpu_inference}; then
        _cmd="${cuda_cmd}"
        _ngpu=1
    else
        _cmd="${decode_cmd}"
        _ngpu=0
    fi

    for dset in ${test_sets}; do
        _data="${data_feats}/${dset}"
        _dir="${asr_exp}/decode_${dset}"
        _logdir="${_dir}/logdir"
        mkdir -p "${_logdir}"

        key_file=${_data}/wav.scp
        split_scps=""
        _nj=$(min "${inference_nj}" "$(<${key_file} wc -l)")
        for n in $(seq "${_nj}"); do
            split_scps+=" ${_logdir}/keys.${n}.scp"
        done
        # shellcheck disable=SC2086
        utils/split_scp.pl "${key_file}" ${split_scps}

        log "Decoding started... log: '${_logdir}/asr_inference.*.log'"
        # shellcheck disable=SC2086
        ${_cmd} --gpu "${_ngpu}" JOB=1:"${_nj}" "${_logdir}"/asr_inference.JOB.log \
            ${python} -m espnet2.bin.asr_inference \
                --batch_size 1 \
                --ngpu "${_ngpu}" \
                --data_path_and_name_and_type "${_data}/wav.scp,speech,sound" \
                --key_file "${_logdir}"/keys.JOB.scp \
                --asr_train_config "${asr_exp}"/config.yaml \
                --asr_model_file "${asr_exp}"/"${inference_asr_model}" \
                --output_dir "${_logdir}"/output.JOB \
                --config "${inference_config}"

        for f in token token_int score text; do
            for i in $(seq "${_nj}"); do
                cat "${_logdir}/output.${i}/1best_recog/${f}"
            done | LC_ALL=C sort -k1 >"${_dir}/${f}"
        done
    done
fi

if [ ${stage} -le 13 ] && [ ${stop_stage} -ge 13 ]; then
    log "Stage 13: Scoring"
    for dset in ${test_sets}; do
        _data="${data_feats}/${dset}"
        _dir="${asr_exp}/decode_${dset}"
        for _type in cer wer; do
            _scoredir="${_dir}/score_${_type}"
            mkdir -p "${_scoredir}"
            paste \
                <(<"${_data}/text" python3 -m espnet2.bin.tokenize_text -f 2- --input - --output - --token_type word) \
                <(<"${_data}/utt2spk" awk '{ print "(" $2 "-" $1 ")" }') \
                    >"${_scoredir}/ref.trn"
            paste \
                <(<"${_dir}/text" python3 -m espnet2.bin.tokenize_text -f 2- --input - --output - --token_type word) \
                <(<"${_data}/utt2spk" awk '{ print "(" $2 "-" $1 ")" }') \
                    >"${_scoredir}/hyp.trn"
            sclite -r "${_scoredir}/ref.trn" trn -h "${_scoredir}/hyp.trn" trn -i rm -o all stdout > "${_scoredir}/result.txt"
            log "Write ${_type} result in ${_scoredir}/result.txt"
            grep -e Avg -e SPKR -m 2 "${_scoredir}/result.txt"
        done
    done
fi

log "Successfully finished. [elapsed=${SECONDS}s]"
