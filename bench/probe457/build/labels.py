"""Labels for probe457 (video summarization / highlight detection, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit for an explicit torch_npu port.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment for torch_npu; many hosts/containers already export it, so not required "
                "for a port to run (npu_only_addition inserted before this line)")
IMPORT_NOTE = ("entry script: explicit port imports torch_npu next to the first torch import; mandatory before "
               "torch_npu 2.5.1 (autoload makes it optional later, but the explicit port still adds it)")

# ---------------------------------------------------------------- PGL-SUM (e-apostolidis/PGL-SUM)
E("pgl_configs", "model/configs.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM model/configs.py (module-level device global, argparse Config)", [
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "module-level device global used by Solver via config.device; unported, an NPU host has no CUDA and "
      "silently trains on CPU"),
])

E("pgl_solver", "model/solver.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM model/solver.py (Solver build/train/evaluate)", [
    C("torch.cuda.manual_seed_all(self.config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.config.seed)",
      "torch.manual_seed on the line above already seeds every device generator (custom-device seeding in "
      "torch 2.x, unconfirmed in knowledge); the CUDA call is a lazy no-op without CUDA, so not required"),
])

E("pgl_summarizer", "model/layers/summarizer.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM model/layers/summarizer.py (PGL_SUM module; .cuda() only inside a docstring)", [])

E("pgl_attention", "model/layers/attention.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM model/layers/attention.py (SelfAttention/MultiAttention, device=weight.device)", [])

E("pgl_inference", "inference/inference.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM inference/inference.py (evaluate released pretrained models on CPU)", [
    C("trained_model.load_state_dict(torch.load(join(model_path, model_file[-1])))", "device_type", "replace", True,
      "trained_model.load_state_dict(torch.load(join(model_path, model_file[-1]), map_location='cpu'))",
      "the released checkpoints were saved from a CUDA model; without map_location torch.load tries to "
      "restore CUDA storages and fails on a host without CUDA (this script keeps the model on CPU)"),
])

E("pgl_fscores", "evaluation/compute_fscores.py", "explicit_replacement",
  "e-apostolidis/PGL-SUM evaluation/compute_fscores.py (numpy/h5py only)", [])

E("pgl_run_splits", "model/run_summe_splits.sh", "explicit_replacement",
  "e-apostolidis/PGL-SUM style split-runner shell script", [
    C("GPU=${1:-0}", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "user-chosen card; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the chosen NPU is "
      "silently not used (everything lands on npu:0)"),
])

# ---------------------------------------------------------------- CA-SUM (e-apostolidis/CA-SUM)
E("casum_configs", "model/configs.py", "explicit_replacement",
  "e-apostolidis/CA-SUM model/configs.py (device chosen inside Config.__init__)", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "falls back to CPU silently on an NPU host"),
])

E("casum_solver", "model/solver.py", "explicit_replacement",
  "e-apostolidis/CA-SUM model/solver.py (length/entropy regularised unsupervised training)", [
    C("torch.cuda.max_memory_allocated(self.config.device)", "torch_cuda_api", "replace", True,
      "f'{torch.npu.max_memory_allocated(self.config.device) / 2 ** 20:.1f} MiB')",
      "verbose-only memory log; torch.cuda.max_memory_allocated given an npu device raises, so --verbose "
      "runs crash after the first epoch"),
])

E("casum_attention", "model/layers/attention.py", "explicit_replacement",
  "e-apostolidis/CA-SUM model/layers/attention.py (block-diagonal concentrated attention, device-agnostic)", [])

E("casum_inference", "inference/inference.py", "explicit_replacement",
  "e-apostolidis/CA-SUM inference/inference.py (pretrained model evaluation on the device global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "device global also feeds map_location below, so this one edit fixes loading too"),
])

# ---------------------------------------------------------------- DSNet (li-plus/DSNet)
E("dsnet_init_helper", "src/helpers/init_helper.py", "explicit_replacement",
  "li-plus/DSNet src/helpers/init_helper.py (argparse --device default 'cuda')", [
    C("parser.add_argument('--device', type=str, default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu',",
      "default device string used by every .to(args.device) in the trainers"),
    C("choices=('cuda', 'cpu'))", "device_type", "replace", False,
      "choices=('npu', 'cpu'))",
      "argparse does not check defaults against choices, so the ported default runs; only an explicit "
      "--device npu is rejected"),
])

E("dsnet_train", "src/train.py", "explicit_replacement",
  "li-plus/DSNet src/train.py (entry point dispatching anchor-based/anchor-free trainers)", [
    C("from helpers import init_helper, data_helper", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE + "; this entry has no direct torch import"),
])

E("dsnet_ab_train", "src/anchor_based/train.py", "explicit_replacement",
  "li-plus/DSNet src/anchor_based/train.py (device-agnostic via args.device)", [])

E("dsnet_ab_model", "src/anchor_based/dsnet.py", "explicit_replacement",
  "li-plus/DSNet src/anchor_based/dsnet.py (DSNet anchor-based model)", [])

E("dsnet_af_losses", "src/anchor_free/losses.py", "explicit_replacement",
  "li-plus/DSNet src/anchor_free/losses.py (focal / soft-IoU / centerness losses)", [])

E("dsnet_evaluate", "src/evaluate.py", "explicit_replacement",
  "li-plus/DSNet src/evaluate.py (entry point; map_location lambda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("dsnet_video_helper", "src/helpers/video_helper.py", "explicit_replacement",
  "li-plus/DSNet src/helpers/video_helper.py (GoogLeNet pool5 feature extractor + KTS)", [
    C("self.model = self.model.cuda().eval()", "tensor_to_device", "replace", True,
      "self.model = self.model.npu().eval()", "hard-coded CUDA placement of the feature extractor"),
    C("feat = self.model(batch.cuda())", "tensor_to_device", "replace", True,
      "feat = self.model(batch.npu())", "input batch must follow the model to the NPU"),
])

E("dsnet_requirements", "requirements.txt", "explicit_replacement",
  "li-plus/DSNet requirements.txt (plain pins, no CUDA wheels)", [])

# ---------------------------------------------------------------- UMT (TencentARC/UMT, nncore-based)
E("umt_launch", "tools/launch.py", "explicit_replacement",
  "TencentARC/UMT tools/launch.py (nncore Engine launcher)", [
    C("=import nncore", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("launcher = comm.init_dist(launcher=args.launcher)", "dist_backend", "replace", True,
      "launcher = comm.init_dist(launcher=args.launcher, backend='hccl')",
      "nncore's init_dist defaults to backend='nccl' (hidden in the library default); distributed runs need hccl"),
])

E("umt_model", "models/umt.py", "explicit_replacement",
  "TencentARC/UMT models/umt.py (UMT, uni/cross-modal encoders, query generator/decoder)", [])

E("umt_blocks", "models/blocks/transformer.py", "explicit_replacement",
  "TencentARC/UMT models/blocks/transformer.py (bottleneck transformer, positional encoding)", [])

E("umt_config", "configs/qvhighlights/umt_base_va_200e_qvhighlights.py", "explicit_replacement",
  "TencentARC/UMT configs (nncore python config with loader pin_memory=True)", [])

E("umt_tvsum", "datasets/tvsum.py", "explicit_replacement",
  "TencentARC/UMT datasets/tvsum.py (highlight detection top-5 mAP)", [])

E("umt_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "torchrun multi-GPU launcher in the style of nncore/mmcv dist_train.sh", [
    C("=set -e", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=${DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${DEVICES:-0,1,2,3}",
      "user-selectable card list (DEVICES); ignored by the Ascend runtime, so a chosen subset is silently "
      "not honoured"),
])

# ---------------------------------------------------------------- Moment-DETR (jayleicn/moment_detr)
E("mdetr_config", "moment_detr/config.py", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/config.py (int --device mapped to torch.device)", [
    C('opt.device = torch.device("cuda" if opt.device >= 0 else "cpu")', "device_type", "replace", True,
      'opt.device = torch.device("npu" if opt.device >= 0 else "cpu")',
      "single source of the run device for train/inference"),
])

E("mdetr_train", "moment_detr/train.py", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed two lines above already seeds device generators (unconfirmed in knowledge); "
      "the CUDA call is a lazy no-op"),
    C('if opt.device.type == "cuda":', "device_type", "replace", False,
      'if opt.device.type == "npu":',
      "redundant: setup_model() (inference.py) already moved model and criterion; unported the branch is "
      "just skipped"),
])

E("mdetr_inference", "moment_detr/inference.py", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/inference.py (setup_model, eval_epoch, start_inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if opt.device.type == "cuda":', "device_type", "replace", True,
      'if opt.device.type == "npu":',
      "the only place the model is moved to the device; unported the model stays on CPU while "
      "prepare_batch_inputs puts the batch on npu -> device mismatch"),
])

E("mdetr_model", "moment_detr/model.py", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/model.py (MomentDETR with saliency highlight head, SetCriterion)", [])

E("mdetr_dataset", "moment_detr/start_end_dataset.py", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/start_end_dataset.py (prepare_batch_inputs non_blocking)", [])

E("mdetr_train_sh", "moment_detr/scripts/train.sh", "explicit_replacement",
  "jayleicn/moment_detr moment_detr/scripts/train.sh", [
    C("=dset_name=hl", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$PYTHONPATH:. python moment_detr/train.py \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 PYTHONPATH=$PYTHONPATH:. python moment_detr/train.py \\",
      "hard-coded card 0: ignoring the CUDA variable still lands on npu:0, so not required"),
])

E("mdetr_run_video", "run_on_video/run.py", "explicit_replacement",
  "jayleicn/moment_detr run_on_video/run.py (MomentDETRPredictor demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('def __init__(self, ckpt_path, clip_model_name_or_path="ViT-B/32", device="cuda"):', "device_type",
      "replace", False,
      'def __init__(self, ckpt_path, clip_model_name_or_path="ViT-B/32", device="npu"):',
      "default only; the caller in run_example passes device explicitly"),
    C('=device="cuda"', "device_type", "replace", True, 'device="npu"',
      "explicit device passed to the predictor (CLIP extractor and Moment-DETR)"),
])

E("mdetr_clip_feats", "run_on_video/data_utils.py", "explicit_replacement",
  "jayleicn/moment_detr run_on_video/data_utils.py (CLIP feature extractor, ffmpeg loader)", [
    C('model_name_or_path="ViT-B/32", device="cuda"):', "device_type", "replace", False,
      'def __init__(self, framerate=1/2, size=224, centercrop=True, model_name_or_path="ViT-B/32", device="npu"):',
      "default only; MomentDETRPredictor always passes device"),
])

# ---------------------------------------------------------------- DR-DSN (KaiyangZhou/pytorch-vsumm-reinforce)
E("drdsn_main", "main.py", "explicit_replacement",
  "KaiyangZhou/pytorch-vsumm-reinforce main.py (use_gpu flag, DataParallel, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu selects the card; the CUDA variable is ignored on Ascend so the selection silently does nothing"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()",
      "False on an NPU host -> silent CPU training"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "module-level torch.manual_seed already seeds the device generators (unconfirmed in knowledge)"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "checkpoints written by the GPU version hold CUDA storages; loading fails without CUDA. The model is "
      "still on CPU here, so map to cpu"),
    C("model = nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); single-card .npu()"),
    C("if use_gpu: seq = seq.cuda()", "tensor_to_device", "replace", True,
      "if use_gpu: seq = seq.npu()", "training input placement"),
    C("=seq = seq.cuda()", "tensor_to_device", "replace", True,
      "seq = seq.npu()", "evaluation input placement"),
    C("model_state_dict = model.module.state_dict() if use_gpu else model.state_dict()", "distributed_framework",
      "replace", True, "model_state_dict = model.state_dict()",
      "follows from dropping DataParallel: .module no longer exists, saving would raise AttributeError"),
])

E("drdsn_rewards", "rewards.py", "explicit_replacement",
  "KaiyangZhou/pytorch-vsumm-reinforce rewards.py (diversity/representativeness reward)", [
    C("if use_gpu: reward = reward.cuda()", "tensor_to_device", "replace", True,
      "if use_gpu: reward = reward.npu()",
      "use_gpu is True after the port, so the .cuda() call itself raises on an NPU host"),
    C("if use_gpu: reward_div = reward_div.cuda()", "tensor_to_device", "replace", True,
      "if use_gpu: reward_div = reward_div.npu()", "same as above, single-pick branch"),
])
