"""Labels for probe453 (speech separation: Conv-TasNet, DPRNN, SepFormer, asteroid recipes, TF-GridNet).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port,
no transfer_to_npu). Assumed target: torch 2.1.0 + torch_npu 2.1.0.post12 (CANN 8.1.RC1), Atlas A2,
where `import torch_npu` is still needed before anything touches torch.npu / 'npu' devices.
"""

ENTRIES = []

SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# kaituoxu/Conv-TasNet
# ---------------------------------------------------------------------------------------------
E("ktx_train", "src/train.py", "explicit_replacement",
  "kaituoxu/Conv-TasNet src/train.py (argparse --use_cuda, DataParallel + .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch 2.1 + torch_npu 2.1 has no device-backend autoload, so .npu() needs the import"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is ✘ on A2/A3 (Ascend 2.7.1 API list; msFmkTransplt README); single-NPU run, "
      "the solver unwraps .module only if present"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "Module.cuda() fails on a host without CUDA"),
])

E("ktx_solver", "src/solver.py", "explicit_replacement",
  "kaituoxu/Conv-TasNet src/solver.py (per-batch .cuda() in _run_one_epoch)", [
    C("padded_mixture = padded_mixture.cuda()", "tensor_to_device", "replace", True,
      "padded_mixture = padded_mixture.npu()", "batch must live on the model's device"),
    C("mixture_lengths = mixture_lengths.cuda()", "tensor_to_device", "replace", True,
      "mixture_lengths = mixture_lengths.npu()", "used inside cal_loss together with NPU tensors"),
    C("padded_source = padded_source.cuda()", "tensor_to_device", "replace", True,
      "padded_source = padded_source.npu()", "targets for the PIT SI-SNR loss"),
])

E("ktx_evaluate", "src/evaluate.py", "explicit_replacement",
  "kaituoxu/Conv-TasNet src/evaluate.py (--use_cuda branch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script of the evaluation stage"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "only reached with --use_cuda 1 (run.sh default ev_use_cuda=0), but fails whenever it is"),
    C("padded_mixture = padded_mixture.cuda()", "tensor_to_device", "replace", True,
      "padded_mixture = padded_mixture.npu()", "same --use_cuda branch"),
    C("mixture_lengths = mixture_lengths.cuda()", "tensor_to_device", "replace", True,
      "mixture_lengths = mixture_lengths.npu()", "same --use_cuda branch"),
    C("padded_source = padded_source.cuda()", "tensor_to_device", "replace", True,
      "padded_source = padded_source.npu()", "same --use_cuda branch"),
])

E("ktx_model", "src/conv_tasnet.py", "explicit_replacement",
  "kaituoxu/Conv-TasNet src/conv_tasnet.py (model; device-agnostic, map_location lambda)", [])

E("ktx_utils", "src/utils.py", "explicit_replacement",
  "kaituoxu/Conv-TasNet src/utils.py (overlap_and_add via new_tensor/index_add_; agnostic)", [])

E("ktx_run", "egs/wsj0-2mix/run.sh", "explicit_replacement",
  "kaituoxu/Conv-TasNet egs/wsj0-2mix/run.sh (Kaldi-style stages, CUDA_VISIBLE_DEVICES=$id)", [
    C("=. ./path.sh", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN runtime environment must be sourced before torch_npu can load"),
    C('CUDA_VISIBLE_DEVICES="$id" \\', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES="$id" \\',
      "device pinning for train.py; unchanged, --id N silently trains on NPU 0"),
])

# ---------------------------------------------------------------------------------------------
# asteroid-team/asteroid (egs/wham/ConvTasNet + library)
# ---------------------------------------------------------------------------------------------
E("ast_train", "egs/wham/ConvTasNet/train.py", "explicit_replacement",
  "asteroid-team/asteroid egs/wham/ConvTasNet/train.py (pytorch-lightning Trainer, accelerator/strategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('accelerator="gpu" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      'accelerator="npu" if torch.npu.is_available() else "cpu",',
      "unchanged, Lightning silently trains on CPU on an NPU host. Lightning ships no 'npu' accelerator: "
      "the string needs a registered custom Accelerator (unconfirmed in knowledge)"),
    C('strategy="ddp",', "dist_backend", "replace", True,
      'strategy=pl.strategies.DDPStrategy(process_group_backend="hccl"),',
      "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot reduce NPU tensors"),
])

E("ast_eval", "egs/wham/ConvTasNet/eval.py", "explicit_replacement",
  "asteroid-team/asteroid egs/wham/ConvTasNet/eval.py (--use_gpu, model_device from parameters)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "rest of the loop follows next(model.parameters()).device"),
])

E("ast_run", "egs/wham/ConvTasNet/run.sh", "explicit_replacement",
  "asteroid-team/asteroid egs/wham/ConvTasNet/run.sh (id=$CUDA_VISIBLE_DEVICES)", [
    C("=. utils/parse_options.sh", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment for the python stages"),
    C("id=$CUDA_VISIBLE_DEVICES", "env_var", "replace", True, "id=$ASCEND_RT_VISIBLE_DEVICES",
      "default device list; unchanged it is empty on an NPU host and the launch lines below then export an "
      "empty ASCEND_RT_VISIBLE_DEVICES, overriding what the user set"),
    C("CUDA_VISIBLE_DEVICES=$id $python_path train.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$id $python_path train.py \\", "--id selects NPUs for training"),
    C("CUDA_VISIBLE_DEVICES=$id $python_path eval.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$id $python_path eval.py \\", "--id selects the NPU for evaluation"),
])

E("ast_conf", "egs/wham/ConvTasNet/local/conf.yml", "explicit_replacement",
  "asteroid-team/asteroid egs/wham/ConvTasNet/local/conf.yml (no device keys)", [])

E("ast_dprnn", "asteroid/masknn/recurrent.py", "explicit_replacement",
  "asteroid-team/asteroid asteroid/masknn/recurrent.py (SingleRNN, DPRNNBlock, DPRNN; agnostic)", [])

E("ast_reqs", "requirements/install.txt", "explicit_replacement",
  "asteroid-team/asteroid requirements/install.txt", [
    C("=torch>=2.0.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel must match the torch version exactly (2.1.0 here); torch should be pinned to 2.1.0 too"),
])

# ---------------------------------------------------------------------------------------------
# speechbrain/speechbrain (WSJ0Mix SepFormer recipe + core)
# ---------------------------------------------------------------------------------------------
E("sb_train", "recipes/WSJ0Mix/separation/train.py", "explicit_replacement",
  "speechbrain/speechbrain recipes/WSJ0Mix/separation/train.py (Separation Brain, AMP fit_batch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "recipe entry script"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "auto_mix_prec: True in sepformer.yaml; CUDA autocast on an NPU host disables itself, so training runs "
      "fp32 against an NPU GradScaler and the requested mixed precision is silently lost"),
])

E("sb_hparams", "recipes/WSJ0Mix/separation/hparams/sepformer.yaml", "explicit_replacement",
  "speechbrain/speechbrain recipes/WSJ0Mix/separation/hparams/sepformer.yaml", [])

E("sb_core", "speechbrain/core.py", "explicit_replacement",
  "speechbrain/speechbrain speechbrain/core.py (parse_arguments, Brain.__init__, fit_batch, _wrap_distributed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module; redundant once the recipe entry imports torch_npu, kept for other entry points"),
    C('default="cuda:0",', "device_type", "replace", True, 'default="npu:0",',
      "default --device; unchanged every run targets cuda:0"),
    C('default="nccl",', "dist_backend", "replace", True, 'default="hccl",',
      "--distributed_backend default read by ddp_init_group"),
    C('if local_rank is not None and "cuda" in run_opts["device"]:', "device_type", "replace", True,
      'if local_rank is not None and "npu" in run_opts["device"]:',
      "unchanged, every DDP rank keeps npu:0 instead of npu:<local_rank>"),
    C('"distributed_backend": "nccl",', "dist_backend", "replace", False, '"distributed_backend": "hccl",',
      "run_opt_defaults entry; Brain never uses it and parse_arguments always supplies the key, so inert"),
    C('if self.device == "cuda":', "device_type", "replace", False, 'if self.device == "npu":',
      "bare 'npu' device: default device is already 0, so skipping set_device(0) is harmless"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "reached once the branch above matches 'npu'; torch.cuda.set_device raises without CUDA"),
    C('elif "cuda" in self.device:', "device_type", "replace", True, 'elif "npu" in self.device:',
      "unchanged, set_device is never called for npu:N and HCCL/default-device ops land on NPU 0"),
    C("torch.cuda.set_device(int(self.device[-1]))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(self.device[-1]))", "per-rank device context"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: fp16 NPU autocast then runs without loss scaling"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "default Brain.fit_batch AMP path (used by recipes that do not override fit_batch)"),
    C("module = DP(module)", "unsupported_op_workaround", "replace", True,
      'raise ValueError("DataParallel is not supported on Ascend NPU; use --distributed_launch with hccl")',
      "torch.nn.DataParallel ✘ on A2/A3; only reached with --data_parallel_backend, fails whenever it is"),
])

E("sb_dist", "speechbrain/utils/distributed.py", "explicit_replacement",
  "speechbrain/speechbrain speechbrain/utils/distributed.py (ddp_init_group backend checks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported backend check below names torch_npu directly"),
    C('if run_opts["local_rank"] + 1 > torch.cuda.device_count():', "torch_cuda_api", "replace", True,
      'if run_opts["local_rank"] + 1 > torch.npu.device_count():',
      "torch.cuda.device_count() is 0 on an NPU host -> 'Not enough GPUs available!' for every non-gloo backend"),
    C('if run_opts["distributed_backend"] == "nccl":', "dist_backend", "replace", True,
      'if run_opts["distributed_backend"] == "hccl":',
      "backend string comparison is not rewritten by anything (msFmkTransplt README); with --distributed_backend "
      "hccl the else branch raises 'communcation protocol doesn't exist'"),
    C("if not torch.distributed.is_nccl_available():", "dist_backend", "replace", True,
      "if not torch_npu.distributed.is_hccl_available():",
      "NCCL is never built into the CPU/aarch64 torch wheels used with torch_npu; is_hccl_available is the "
      "function transfer_to_npu aliases onto is_nccl_available (module path unconfirmed)"),
])

E("sb_launch", "recipes/WSJ0Mix/separation/run_ddp.sh", "explicit_replacement",
  "SpeechBrain SepFormer DDP launch as documented (torch.distributed.launch --distributed_backend='nccl'), "
  "user launcher", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (source before set -u: set_env.sh reads unset variables)"),
    C('if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then', "env_var", "replace", True,
      'if [ -z "${ASCEND_RT_VISIBLE_DEVICES:-}" ]; then',
      "unchanged, the (ported) export below always fires and overrides the user's NPU selection"),
    C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((ngpu - 1)))", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((ngpu - 1)))",
      "only runs when nothing is restricted; left as CUDA it is inert and ranks 0..ngpu-1 hit the same NPUs"),
    C('echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "Using NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"',
      "under set -u an unset CUDA_VISIBLE_DEVICES aborts the script once the check above is ported"),
    C("--distributed_backend='nccl' \\", "dist_backend", "replace", True, "--distributed_backend='hccl' \\",
      "DDP backend passed to ddp_init_group"),
    C("--device cuda:0", "device_type", "replace", True, "--device npu:0", "single-device evaluation run"),
])

E("sb_infer", "tools/separate_folder.py", "explicit_replacement",
  "SpeechBrain pretrained SepformerSeparation usage (from_hparams run_opts device), user script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('device = "cpu" if args.cpu or not torch.cuda.is_available() else "cuda"', "device_type", "replace", True,
      'device = "cpu" if args.cpu or not torch.npu.is_available() else "npu"',
      "unchanged, separation silently runs on CPU on an NPU host"),
    C('if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
      "only gates a memory log line"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated()",
      "log only; the CUDA call returns 0 when CUDA was never initialised, so it misreports rather than fails"),
])

# ---------------------------------------------------------------------------------------------
# espnet/espnet (enh1 TF-GridNetV2 recipe + espnet2 trainer)
# ---------------------------------------------------------------------------------------------
E("esp_tfgridnet", "espnet2/enh/separator/tfgridnetv2_separator.py", "explicit_replacement",
  "espnet/espnet espnet2/enh/separator/tfgridnetv2_separator.py (TF-GridNetV2; agnostic)", [])

E("esp_stft", "espnet2/layers/stft.py", "device_branch_or_abstraction",
  "espnet/espnet espnet2/layers/stft.py (pre-torch-1.10 form of the MKL/librosa fallback check)", [
    C("if input.is_cuda or torch.backends.mkl.is_available():", "device_type", "add_branch", True,
      'if input.is_cuda or input.device.type == "npu" or torch.backends.mkl.is_available():',
      "Ascend training hosts are usually aarch64 (no MKL): NPU tensors fall into the librosa branch, which "
      "raises in training mode and calls .numpy() on a device tensor; torch.stft itself is ✔ (fp32)"),
])

E("esp_trainer", "espnet2/train/trainer.py", "explicit_replacement",
  "espnet/espnet espnet2/train/trainer.py (GradScaler/autocast, DDP device_ids, to_device strings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module-level 'from torch.npu.amp import' below needs torch_npu loaded first"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch.npu.amp import GradScaler, autocast",
      "use_amp: CUDA scaler/autocast disable themselves without CUDA -> silent fp32 training"),
    C('map_location=f"cuda:{torch.cuda.current_device()}" if ngpu > 0 else "cpu",', "torch_cuda_api", "replace",
      True, 'map_location=f"npu:{torch.npu.current_device()}" if ngpu > 0 else "cpu",',
      "resume; torch.cuda.current_device() raises without CUDA"),
    C("device_ids=[torch.cuda.current_device()] if distributed_option.ngpu == 1 else None,", "torch_cuda_api",
      "replace", True, "device_ids=[torch.npu.current_device()] if distributed_option.ngpu == 1 else None,",
      "DDP wrap in every distributed run"),
    C("output_device=torch.cuda.current_device() if distributed_option.ngpu == 1 else None,", "torch_cuda_api",
      "replace", True, "output_device=torch.npu.current_device() if distributed_option.ngpu == 1 else None,",
      "same DDP wrap"),
    C("dp_model = torch.nn.parallel.DataParallel(model, device_ids=list(range(distributed_option.ngpu)))",
      "unsupported_op_workaround", "replace", True,
      'raise RuntimeError("DataParallel is not supported on Ascend NPU; use --multiprocessing_distributed true")',
      "ngpu>1 without distributed mode; DataParallel ✘ on A2/A3"),
    C('iterator_stop = torch.tensor(0).to("cuda" if ngpu > 0 else "cpu")', "tensor_to_device", "replace", True,
      'iterator_stop = torch.tensor(0).to("npu" if ngpu > 0 else "cpu")',
      "all_reduce'd over HCCL every iteration; must be an NPU tensor"),
    C('batch = to_device(batch, "cuda" if ngpu > 0 else "cpu")', "tensor_to_device", "replace", True,
      'batch = to_device(batch, "npu" if ngpu > 0 else "cpu")', "training batch placement"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only gates a memory statistic in the log"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False, "torch.npu.max_memory_reserved()",
      "log statistic; returns 0 rather than failing when CUDA was never initialised"),
    C('device = "cuda" if ngpu > 0 else "cpu"', "device_type", "replace", True,
      'device = "npu" if ngpu > 0 else "cpu"', "validation batch placement and stop flag"),
])

E("esp_abstask", "espnet2/tasks/abs_task.py", "explicit_replacement",
  "espnet/espnet espnet2/tasks/abs_task.py (argparse --dist_backend/--cudnn_*, main_worker model.to)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "redundant: this module imports espnet2.train.trainer, which loads torch_npu at import time"),
    C('default="nccl",', "dist_backend", "replace", True, 'default="hccl",',
      "--dist_backend default feeds DistributedOption.dist_backend"),
    C('device="cuda" if args.ngpu > 0 else "cpu",', "device_type", "replace", True,
      'device="npu" if args.ngpu > 0 else "cpu",', "model placement for --ngpu > 0"),
])

E("esp_dist", "espnet2/train/distributed_utils.py", "explicit_replacement",
  "espnet/espnet espnet2/train/distributed_utils.py (DistributedOption)", [
    C('dist_backend: str = "nccl"', "dist_backend", "replace", False, 'dist_backend: str = "hccl"',
      "dataclass default; build_dataclass always fills it from --dist_backend, so inert once abs_task is ported"),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", "replace", False,
      'if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:',
      "sanity check only; left as CUDA it is simply skipped on an NPU host"),
    C('cvd = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'cvd = os.environ["ASCEND_RT_VISIBLE_DEVICES"]',
      "once the check above looks at ASCEND_RT_VISIBLE_DEVICES this lookup raises KeyError"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.local_rank)", "per-process device before HCCL use"),
])

E("esp_conf", "egs2/wsj0_2mix/enh1/conf/tuning/train_enh_tfgridnetv2.yaml", "explicit_replacement",
  "espnet/espnet egs2/wsj0_2mix/enh1/conf/tuning/train_enh_tfgridnetv2.yaml", [])

E("esp_path", "egs2/wsj0_2mix/enh1/path.sh", "explicit_replacement",
  "espnet/espnet egs2/*/path.sh (NCCL_SOCKET_IFNAME)", [
    C("=export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", True, SET_ENV,
      "every recipe stage sources path.sh; CANN env must be present for torch_npu"),
    C('export NCCL_SOCKET_IFNAME="^lo,docker,virbr,vmnet,vboxnet"', "env_var", "replace", False,
      'export HCCL_SOCKET_IFNAME="^lo,docker,virbr,vmnet,vboxnet"',
      "NCCL var is inert on NPU; HCCL accepts the same ^prefix exclusion form and by default already prefers "
      "non-docker/non-lo NICs"),
])

E("esp_infer", "espnet2/bin/enh_inference.py", "explicit_replacement",
  "espnet/espnet espnet2/bin/enh_inference.py (SeparateSpeech, ngpu -> device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "--ngpu 1 decoding; build_model_from_file and to_device follow this string"),
])

E("esp_docker", "docker/prebuilt/gpu.dockerfile", "explicit_replacement",
  "espnet/espnet docker/prebuilt/gpu.dockerfile (nvidia/cuda base, cu118 wheels)", [
    C("FROM nvidia/cuda:", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "needs a CANN toolkit base image (tag illustrative); the CUDA image has no Ascend runtime"),
    C("=ARG TH_CUDA=cu118", "device_type", "replace", True, "ARG TH_CUDA=cpu",
      "torch_npu pairs with the CPU build of torch (x86 from whl/cpu; aarch64 plain PyPI, which has no cu118 "
      "wheels at all)"),
    C("=ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "inert on an NPU image"),
    C("=ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}", "env_var", "replace", False,
      "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
      "unconfirmed: depends on what the CANN base image already exports"),
    C("--index-url https://download.pytorch.org/whl/${TH_CUDA}", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post12", "install torch_npu matching torch 2.1.0"),
])

# ---------------------------------------------------------------------------------------------
# JusperLee/Dual-Path-RNN-Pytorch
# ---------------------------------------------------------------------------------------------
E("dprnn_conf", "config/Dual_RNN/train.yml", "explicit_replacement",
  "JusperLee/Dual-Path-RNN-Pytorch config/Dual_RNN/train.yml (gpuid list)", [])

E("dprnn_train", "train_rnn.py", "explicit_replacement",
  "JusperLee/Dual-Path-RNN-Pytorch train_rnn.py (make_dataloader, optimizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      'pin_memory=torch.npu.is_available(), pin_memory_device="npu")',
      "performance only: False on an NPU host just means pageable host copies (unconfirmed whether torch_npu "
      "needs pin_memory_device)"),
])

E("dprnn_trainer", "trainer/trainer_Dual_RNN.py", "explicit_replacement",
  "JusperLee/Dual-Path-RNN-Pytorch trainer/trainer_Dual_RNN.py (cuda:{gpuid}, data_parallel, torch.cuda.device)", [
    C("'cuda:{}'.format(opt['train']['gpuid'][0]))", "device_type", "replace", True,
      "'npu:{}'.format(opt['train']['gpuid'][0]))", "model/batch device"),
    C("out = torch.nn.parallel.data_parallel(self.dualrnn,mix,device_ids=self.gpuid)",
      "unsupported_op_workaround", "replace", True, "out = self.dualrnn(mix)",
      "functional data_parallel (scatter/replicate) is CUDA-only; single-NPU forward (multi-NPU needs DDP)"),
    C("out = data_parallel(self.dualrnn, mix, device_ids=self.gpuid)", "unsupported_op_workaround", "replace",
      True, "out = self.dualrnn(mix)", "same in validation"),
    C("with torch.cuda.device(self.gpuid[0]):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.gpuid[0]):", "device context around the whole run()"),
])

E("dprnn_test", "test_dualrnn.py", "explicit_replacement",
  "JusperLee/Dual-Path-RNN-Pytorch test_dualrnn.py (Separation: net.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("self.net = net.cuda()", "tensor_to_device", "replace", True, "self.net = net.npu()",
      "unconditional .cuda()"),
    C("self.device = torch.device('cuda:{}'.format(", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(", "input placement"),
])

E("dprnn_run", "run.sh", "explicit_replacement",
  "user launcher for JusperLee/Dual-Path-RNN-Pytorch (nvidia-smi picks the freest GPU)", [
    C("config=${1:-./config/Dual_RNN/train.yml}", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment"),
    C("gpu=$(nvidia-smi --query-gpu=index,memory.free", "device_capability_check", "replace", True,
      "gpu=$(python -c \"import torch, torch_npu; print(max(range(torch.npu.device_count()), "
      "key=lambda i: torch.npu.mem_get_info(i)[0]))\")",
      "no nvidia-smi on an Ascend host; npu-smi output is a different table, torch.npu.mem_get_info is ✔"),
    C("export CUDA_VISIBLE_DEVICES=${gpu}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${gpu}",
      "unchanged, training ignores the chosen device"),
])

# ---------------------------------------------------------------------------------------------
# gpuRIR + cupy reverberant-mixture simulation (community WHAMR!-style helper)
# ---------------------------------------------------------------------------------------------
E("sim_gpurir", "local/simulate_whamr_reverb.py", "kernel_rewrite",
  "community WHAMR!-style reverberant mixture generator on gpuRIR + cupyx (pattern of separation forks)", [
    C("=import cupy as cp", "custom_cuda_extension", "removal", True, None,
      "cupy has no Ascend backend (cupy #9379); convolution moves to scipy on the host"),
    C("from cupyx.scipy.signal import fftconvolve", "custom_cuda_extension", "replace", True,
      "from scipy.signal import fftconvolve", "host FFT convolution"),
    C("=import gpuRIR", "custom_cuda_extension", "replace", True, "import pyroomacoustics as pra",
      "gpuRIR is a CUDA extension (nvcc build); image-source RIRs via pyroomacoustics on the CPU"),
    C("gpuRIR.activateMixedPrecision(False)", "custom_cuda_extension", "removal", True, None,
      "gpuRIR-only switch"),
    C("gpuRIR.activateLUT(True)", "custom_cuda_extension", "removal", True, None, "gpuRIR-only switch"),
    C("beta = gpuRIR.beta_SabineEstimation(room_sz, t60)", "custom_cuda_extension", "replace", True,
      "e_absorption, max_order = pra.inverse_sabine(t60, room_sz)", "Sabine inversion"),
    C("t_diff = gpuRIR.att2t_SabineEstimator(ATT_DIFF, t60)", "custom_cuda_extension", "removal", True, None,
      "diffuse-tail split has no pyroomacoustics counterpart"),
    C("t_max = gpuRIR.att2t_SabineEstimator(ATT_MAX, t60)", "custom_cuda_extension", "removal", True, None,
      "RIR length follows max_order in pyroomacoustics"),
    C("nb_img = gpuRIR.t2n(t_diff, room_sz)", "custom_cuda_extension", "removal", True, None,
      "image count follows max_order"),
    C("rirs = gpuRIR.simulateRIR(room_sz, beta, pos_src, pos_rcv, nb_img, t_max, FS, Tdiff=t_diff)",
      "custom_cuda_extension", "replace", True,
      "rirs = _pra_rirs(room_sz, e_absorption, max_order, pos_src, pos_rcv)",
      "helper builds a pra.ShoeBox, adds sources/mic, compute_rir(), pads to [n_src, n_rcv, T]"),
    C("direct = gpuRIR.simulateRIR(room_sz, beta, pos_src, pos_rcv, [1, 1, 1], t_max, FS)",
      "custom_cuda_extension", "replace", True,
      "direct = _pra_rirs(room_sz, e_absorption, 0, pos_src, pos_rcv)", "direct path = max_order 0"),
    C("out = fftconvolve(cp.asarray(sig), cp.asarray(rir))[: len(sig)]", "custom_cuda_extension", "replace",
      True, "out = fftconvolve(sig, rir)[: len(sig)]", "numpy arrays in, numpy out"),
    C("return cp.asnumpy(out)", "custom_cuda_extension", "replace", True, "return out",
      "cupy removed"),
])
