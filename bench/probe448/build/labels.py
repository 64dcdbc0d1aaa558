"""Labels for probe448: human motion prediction from past poses (siMLPe, HisRepItself, STS-GCN, LTD, MotionMixer).

One label per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port:
torch.npu.*, 'npu', no transfer_to_npu). `required` uses the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported (explicitly, for torch_npu < 2.5.1 where there is no "
               "backend autoload) before any torch.npu / 'npu' use")
CUDA_TENSOR = "hard-coded .cuda() on a tensor; raises 'Torch not compiled with CUDA enabled' on an NPU host"
PRETRAINED_LOAD = ("torch.load without map_location of a checkpoint the project ships/was trained on GPUs: "
                   "CUDA-tagged storages cannot be deserialised on a host without CUDA")
RESUME_LOAD = ("resume/finetune from a checkpoint this script itself writes; after the port those are saved from NPU "
               "tensors and load fine, so only CUDA-saved files break - robustness, not required")

# ---------------------------------------------------------------------------------------------------------------
# siMLPe (dulucas/siMLPe)
# ---------------------------------------------------------------------------------------------------------------
E("simlpe_config", "exps/baseline_h36m/config.py", "explicit_replacement",
  "dulucas/siMLPe exps/baseline_h36m/config.py (EasyDict experiment config)", [])

E("simlpe_train", "exps/baseline_h36m/train.py", "explicit_replacement",
  "dulucas/siMLPe exps/baseline_h36m/train.py (single-device training loop, DCT pre/post transform)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dct_m = torch.tensor(dct_m).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "dct_m = torch.tensor(dct_m).float().npu().unsqueeze(0)", "module-level DCT matrix moved to GPU; " + CUDA_TENSOR),
    C("idct_m = torch.tensor(idct_m).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "idct_m = torch.tensor(idct_m).float().npu().unsqueeze(0)", "inverse DCT matrix; " + CUDA_TENSOR),
    C("h36m_motion_input_ = torch.matmul(dct_m[:, :, :config.motion.h36m_input_length], h36m_motion_input_.cuda())",
      "tensor_to_device", "replace", True,
      "h36m_motion_input_ = torch.matmul(dct_m[:, :, :config.motion.h36m_input_length], h36m_motion_input_.npu())",
      "batch moved to device inside train_step; " + CUDA_TENSOR),
    C("motion_pred = model(h36m_motion_input_.cuda())", "tensor_to_device", "replace", True,
      "motion_pred = model(h36m_motion_input_.npu())", CUDA_TENSOR),
    C("offset = h36m_motion_input[:, -1:].cuda()", "tensor_to_device", "replace", True,
      "offset = h36m_motion_input[:, -1:].npu()", "residual offset (last observed pose); " + CUDA_TENSOR),
    C("h36m_motion_target = h36m_motion_target.cuda().reshape(b,n,22,3).reshape(-1,3)", "tensor_to_device", "replace",
      True, "h36m_motion_target = h36m_motion_target.npu().reshape(b,n,22,3).reshape(-1,3)", CUDA_TENSOR),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "Module.cuda(); parameters must live on the NPU"),
    C("state_dict = torch.load(config.model_pth)", "tensor_to_device", "replace", False,
      "state_dict = torch.load(config.model_pth, map_location='npu')", RESUME_LOAD),
])

E("simlpe_test", "exps/baseline_h36m/test.py", "explicit_replacement",
  "dulucas/siMLPe exps/baseline_h36m/test.py (H3.6M MPJPE evaluation, autoregressive rollout)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + " (test.py is run standalone to evaluate the released model)"),
    C("dct_m = torch.tensor(dct_m).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "dct_m = torch.tensor(dct_m).float().npu().unsqueeze(0)",
      "module-level; also executed when train.py does 'from test import test'; " + CUDA_TENSOR),
    C("idct_m = torch.tensor(idct_m).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "idct_m = torch.tensor(idct_m).float().npu().unsqueeze(0)", CUDA_TENSOR),
    C("motion_input = motion_input.cuda()", "tensor_to_device", "replace", True,
      "motion_input = motion_input.npu()", CUDA_TENSOR),
    C("motion_input_ = torch.matmul(dct_m[:, :, :config.motion.h36m_input_length], motion_input_.cuda())",
      "tensor_to_device", "replace", True,
      "motion_input_ = torch.matmul(dct_m[:, :, :config.motion.h36m_input_length], motion_input_.npu())",
      CUDA_TENSOR),
    C("state_dict = torch.load(args.model_pth)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.model_pth, map_location='cpu')",
      PRETRAINED_LOAD + " (README points --model-pth at the released siMLPe checkpoint)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda()"),
])

E("simlpe_model", "exps/baseline_h36m/model.py", "explicit_replacement",
  "dulucas/siMLPe exps/baseline_h36m/model.py (siMLPe: FC in, MLP stack, FC out)", [])

E("simlpe_mlp", "exps/baseline_h36m/mlp.py", "explicit_replacement",
  "dulucas/siMLPe exps/baseline_h36m/mlp.py (temporal/spatial FC blocks, custom LayerNorm)", [])

E("simlpe_pyt_utils", "lib/utils/pyt_utils.py", "explicit_replacement",
  "dulucas/siMLPe lib/utils/pyt_utils.py (TorchSeg-style helper module: seeds, checkpoint loading, device parsing)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "on a host without CUDA torch.cuda.manual_seed_all is queued lazily and never runs; torch.manual_seed on the "
      "line above already seeds registered accelerator generators (privateuse1 path) - unconfirmed in "
      "/work/shared/knowledge, so not required"),
    C("devices = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "devices = list(range(torch.npu.device_count()))",
      "torch.cuda.device_count() is 0 on an NPU host -> empty device list for '*'"),
    C("assert end_device < torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert end_device < torch.npu.device_count()", "assert always fails with 0 CUDA devices"),
    C("assert device <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert device <= torch.npu.device_count()", "device-range check against the wrong backend"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "torch.cuda.current_device() initialises CUDA and raises on an NPU host"),
    C("map_location=lambda storage, loc: storage.cuda(device)", "tensor_to_device", "replace", True,
      "pretrained_dict = torch.load(pretrained_path, map_location=f'npu:{device}')",
      "map_location callback moves every storage with .cuda(); fails on NPU host"),
])

E("simlpe_misc", "lib/utils/misc.py", "explicit_replacement",
  "dulucas/siMLPe lib/utils/misc.py (rotation conversions + forward kinematics in torch)", [
    C("eul = torch.zeros(n, 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul = torch.zeros(n, 3).float().npu()",
      "rotmat2euler_torch allocates its output on CUDA; only reached when Euler-angle errors are evaluated; "
      + CUDA_TENSOR),
    C("eul_spec1 = torch.zeros(len(idx_spec1), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_spec1 = torch.zeros(len(idx_spec1), 3).float().npu()", CUDA_TENSOR),
    C("eul_spec2 = torch.zeros(len(idx_spec2), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_spec2 = torch.zeros(len(idx_spec2), 3).float().npu()", CUDA_TENSOR),
    C("eul_remain = torch.zeros(len(idx_remain), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_remain = torch.zeros(len(idx_remain), 3).float().npu()", CUDA_TENSOR),
])

E("simlpe_h36m", "lib/datasets/h36m.py", "explicit_replacement",
  "dulucas/siMLPe lib/datasets/h36m.py (H3.6M expmap -> xyz preprocessing on CPU)", [])

E("simlpe_run", "exps/baseline_h36m/run.sh", "explicit_replacement",
  "launcher in the style of the siMLPe README commands (train + test on one GPU)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the host profile already sources set_env.sh (torch_npu import fails "
      "otherwise), so host-dependent -> not required"),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
      "device selection: CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so GPU=3 would silently run on "
      "NPU 0"),
])

# ---------------------------------------------------------------------------------------------------------------
# HisRepItself (wei-mao-2019/HisRepItself)
# ---------------------------------------------------------------------------------------------------------------
E("hri_opt", "utils/opt.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself utils/opt.py (argparse Options with --cuda_idx)", [
    C("'--cuda_idx', type=str, default='cuda:0'", "device_type", "replace", True,
      "self.parser.add_argument('--cuda_idx', type=str, default='npu:0', help='npu idx')",
      "the single device string every script passes to .to(); default 'cuda:0' breaks on NPU"),
])

E("hri_log", "utils/log.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself utils/log.py (csv logs, torch.save checkpoints)", [])

E("hri_main", "main_h36m_3d.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself main_h36m_3d.py (train/eval of the motion-attention + GCN model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("ckpt = torch.load(model_path_len)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(model_path_len, map_location=opt.cuda_idx)",
      PRETRAINED_LOAD + " (--is_eval with the released checkpoints)"),
])

E("hri_main_eval", "main_h36m_3d_eval.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself main_h36m_3d_eval.py (per-action evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("hri_attmodel", "model/AttModel.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself model/AttModel.py (attention over past sub-sequences + DCT-GCN)", [
    C("dct_m = torch.from_numpy(dct_m).float().cuda()", "tensor_to_device", "replace", True,
      "dct_m = torch.from_numpy(dct_m).float().to(src.device)",
      "DCT matrix created in forward() on the default CUDA device; follow the input's device instead "
      "(.npu() would also break for --cuda_idx npu:1)"),
    C("idct_m = torch.from_numpy(idct_m).float().cuda()", "tensor_to_device", "replace", True,
      "idct_m = torch.from_numpy(idct_m).float().to(src.device)", CUDA_TENSOR),
])

E("hri_gcn", "model/GCN.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself model/GCN.py (graph convolution blocks)", [])

E("hri_h36motion3d", "utils/h36motion3d.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself utils/h36motion3d.py (dataset: expmap -> xyz on the GPU while loading)", [
    C("the_sequence = torch.from_numpy(the_sequence).float().cuda()", "tensor_to_device", "replace", True,
      "the_sequence = torch.from_numpy(the_sequence).float().npu()",
      "dataset __init__ runs forward kinematics on the accelerator; " + CUDA_TENSOR),
    C("the_seq1 = torch.from_numpy(the_sequence1).float().cuda()", "tensor_to_device", "replace", True,
      "the_seq1 = torch.from_numpy(the_sequence1).float().npu()", CUDA_TENSOR),
    C("the_seq2 = torch.from_numpy(the_sequence2).float().cuda()", "tensor_to_device", "replace", True,
      "the_seq2 = torch.from_numpy(the_sequence2).float().npu()", CUDA_TENSOR),
])

E("hri_data_utils", "utils/data_utils.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself utils/data_utils.py (rotation utilities, H3.6M test indices)", [
    C("eul = torch.zeros(n, 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul = torch.zeros(n, 3).float().npu()", CUDA_TENSOR),
    C("eul_spec1 = torch.zeros(len(idx_spec1), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_spec1 = torch.zeros(len(idx_spec1), 3).float().npu()", CUDA_TENSOR),
    C("eul_spec2 = torch.zeros(len(idx_spec2), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_spec2 = torch.zeros(len(idx_spec2), 3).float().npu()", CUDA_TENSOR),
    C("eul_remain = torch.zeros(len(idx_remain), 3).float().cuda()", "tensor_to_device", "replace", True,
      "eul_remain = torch.zeros(len(idx_remain), 3).float().npu()", CUDA_TENSOR),
    C("R = torch.eye(3, 3).repeat(n, 1, 1).float().cuda() + torch.mul(", "tensor_to_device", "replace", True,
      "R = torch.eye(3, 3).repeat(n, 1, 1).float().npu() + torch.mul(",
      "expmap2rotmat_torch is on the dataset-loading path (expmap2xyz_torch); " + CUDA_TENSOR),
])

E("hri_fk", "utils/forward_kinematics.py", "explicit_replacement",
  "wei-mao-2019/HisRepItself utils/forward_kinematics.py (numpy + torch FK, __main__ self-test)", [
    C("np.pad(expmap_gt, (0, 99 - len(expmap_gt))))).astype(float))).cuda()", "tensor_to_device", "replace", False,
      "np.pad(expmap_gt, (0, 99 - len(expmap_gt))))).astype(float))).npu()",
      "only in the module's __main__ self-test, not on any training/eval path; fkl_torch itself already follows "
      "angles.device"),
])

# ---------------------------------------------------------------------------------------------------------------
# STS-GCN (FraLuca/STSGCN)
# ---------------------------------------------------------------------------------------------------------------
E("sts_main", "main_h36_3d.py", "device_branch_or_abstraction",
  "FraLuca/STSGCN main_h36_3d.py (module-level device, train/test/viz modes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "no crash: on an NPU host torch.cuda.is_available() is False and everything silently trains on the CPU"),
    C("model.load_state_dict(torch.load(os.path.join(args.model_path,model_name)))", "tensor_to_device", "replace",
      True, "model.load_state_dict(torch.load(os.path.join(args.model_path,model_name), map_location=device))",
      PRETRAINED_LOAD + " (test mode with the checkpoints shipped in checkpoints/CKPT_3D_H36M)"),
    C("model.load_state_dict(torch.load(os.path.join(args.model_path, model_name)))", "tensor_to_device", "replace",
      True, "model.load_state_dict(torch.load(os.path.join(args.model_path, model_name), map_location=device))",
      PRETRAINED_LOAD + " (viz mode)"),
])

E("sts_parser", "utils/parser.py", "explicit_replacement",
  "FraLuca/STSGCN utils/parser.py (module-level argparse)", [])

E("sts_model", "model.py", "explicit_replacement",
  "FraLuca/STSGCN model.py (ST-GCNN encoder + temporal CNN decoder, einsum graph conv)", [])

E("sts_viz", "utils/h36_3d_viz.py", "explicit_replacement",
  "FraLuca/STSGCN utils/h36_3d_viz.py (matplotlib 3D animation of predictions)", [])

E("sts_amass", "utils/amass_3d.py", "explicit_replacement",
  "FraLuca/STSGCN utils/amass_3d.py (AMASS loader with SMPL forward kinematics on GPU)", [
    C("p3d0 = torch.from_numpy(skel['p3d0']).float().cuda()", "tensor_to_device", "replace", True,
      "p3d0 = torch.from_numpy(skel['p3d0']).float().npu()", "mean SMPL skeleton; " + CUDA_TENSOR),
    C("poses = torch.from_numpy(poses).float().cuda()", "tensor_to_device", "replace", True,
      "poses = torch.from_numpy(poses).float().npu()", "per-sequence poses for ang2joint; " + CUDA_TENSOR),
])

E("sts_requirements", "requirements.txt", "explicit_replacement",
  "FraLuca/STSGCN requirements (pip pins)", [
    C("torch>=1.7.1", "import_torch_npu", "npu_only_addition", False, "torch_npu==2.1.0.post12",
      "add torch_npu (and pin torch to the matching 2.1.0); environment file only - torch_npu is usually installed "
      "per the CANN version on the host, so not required"),
])

# ---------------------------------------------------------------------------------------------------------------
# LTD - Learning Trajectory Dependencies (wei-mao-2019/LearnTrajDep)
# ---------------------------------------------------------------------------------------------------------------
E("ltd_main_3d", "main_3d.py", "explicit_replacement",
  "wei-mao-2019/LearnTrajDep main_3d.py (is_cuda flag, Variable-era training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("is_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "is_cuda = torch.npu.is_available()",
      "gate for every device move below; False on an NPU host so training silently runs on the CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() under is_cuda"),
    C("=ckpt = torch.load(model_path_len)", "tensor_to_device", "replace", False,
      "ckpt = torch.load(model_path_len, map_location='npu')", RESUME_LOAD),
    C("inputs = Variable(inputs.cuda()).float()", "tensor_to_device", "replace", True,
      "inputs = Variable(inputs.npu()).float()", "train(); " + CUDA_TENSOR),
    C("all_seq = Variable(all_seq.cuda(non_blocking=True)).float()", "tensor_to_device", "replace", True,
      "all_seq = Variable(all_seq.npu(non_blocking=True)).float()", "train(); " + CUDA_TENSOR),
    C("inputs = Variable(inputs.cuda(), requires_grad=False).float()", "tensor_to_device", "replace", True,
      "inputs = Variable(inputs.npu(), requires_grad=False).float()", "test(); " + CUDA_TENSOR),
    C("all_seq = Variable(all_seq.cuda(non_blocking=True), requires_grad=False).float()", "tensor_to_device",
      "replace", True, "all_seq = Variable(all_seq.npu(non_blocking=True), requires_grad=False).float()",
      "test(); " + CUDA_TENSOR),
    C("idct_m = Variable(torch.from_numpy(idct_m)).float().cuda()", "tensor_to_device", "replace", True,
      "idct_m = Variable(torch.from_numpy(idct_m)).float().npu()",
      "not guarded by is_cuda; " + CUDA_TENSOR),
    C("inputs = Variable(inputs.cuda(), volatile=True).float()", "tensor_to_device", "replace", True,
      "inputs = Variable(inputs.npu(), volatile=True).float()", "val(); " + CUDA_TENSOR),
    C("all_seq = Variable(all_seq.cuda(non_blocking=True), volatile=True).float()", "tensor_to_device", "replace",
      True, "all_seq = Variable(all_seq.npu(non_blocking=True), volatile=True).float()", "val(); " + CUDA_TENSOR),
])

E("ltd_loss", "utils/loss_funcs.py", "explicit_replacement",
  "wei-mao-2019/LearnTrajDep utils/loss_funcs.py (IDCT + MPJPE / Euler losses)", [
    C("=idct_m = Variable(torch.from_numpy(idct_m)).float().cuda()", "tensor_to_device", "replace", True,
      "idct_m = Variable(torch.from_numpy(idct_m)).float().npu()", "sen_loss; " + CUDA_TENSOR),
    C("idct_m = torch.from_numpy(idct_m).float().cuda()", "tensor_to_device", "replace", True,
      "idct_m = torch.from_numpy(idct_m).float().npu()", "euler_error; " + CUDA_TENSOR),
    C("idct_m = Variable(torch.from_numpy(idct_m).float()).cuda()", "tensor_to_device", "replace", True,
      "idct_m = Variable(torch.from_numpy(idct_m).float()).npu()", "mpjpe_error; " + CUDA_TENSOR),
    C(".float().cuda()  # [seq_len, seq_len]", "tensor_to_device", "replace", True,
      "idct_m = Variable(torch.from_numpy(idct_m)).float().npu()  # [seq_len, seq_len]",
      "mpjpe_error_p3d is the training loss of main_3d.py; " + CUDA_TENSOR),
])

E("ltd_data_utils", "utils/data_utils.py", "explicit_replacement",
  "wei-mao-2019/LearnTrajDep utils/data_utils.py (rotation utils, H3.6M loader doing FK on GPU)", [
    C("eul = Variable(torch.zeros(n, 3).float()).cuda()", "tensor_to_device", "replace", True,
      "eul = Variable(torch.zeros(n, 3).float()).npu()", CUDA_TENSOR),
    C("eul_spec1 = Variable(torch.zeros(len(idx_spec1), 3).float()).cuda()", "tensor_to_device", "replace", True,
      "eul_spec1 = Variable(torch.zeros(len(idx_spec1), 3).float()).npu()", CUDA_TENSOR),
    C("eul_spec2 = Variable(torch.zeros(len(idx_spec2), 3).float()).cuda()", "tensor_to_device", "replace", True,
      "eul_spec2 = Variable(torch.zeros(len(idx_spec2), 3).float()).npu()", CUDA_TENSOR),
    C("eul_remain = Variable(torch.zeros(len(idx_remain), 3).float()).cuda()", "tensor_to_device", "replace", True,
      "eul_remain = Variable(torch.zeros(len(idx_remain), 3).float()).npu()", CUDA_TENSOR),
    C("R = Variable(torch.eye(3, 3).repeat(n, 1, 1)).float().cuda() + torch.mul(", "tensor_to_device", "replace",
      True, "R = Variable(torch.eye(3, 3).repeat(n, 1, 1)).float().npu() + torch.mul(",
      "on the data-loading FK path; " + CUDA_TENSOR),
    C("the_seq = Variable(torch.from_numpy(the_sequence)).float().cuda()", "tensor_to_device", "replace", True,
      "the_seq = Variable(torch.from_numpy(the_sequence)).float().npu()", CUDA_TENSOR),
    C("the_seq1 = Variable(torch.from_numpy(the_sequence1)).float().cuda()", "tensor_to_device", "replace", True,
      "the_seq1 = Variable(torch.from_numpy(the_sequence1)).float().npu()", CUDA_TENSOR),
    C("the_seq2 = Variable(torch.from_numpy(the_sequence2)).float().cuda()", "tensor_to_device", "replace", True,
      "the_seq2 = Variable(torch.from_numpy(the_sequence2)).float().npu()", CUDA_TENSOR),
])

E("ltd_opt", "utils/opt.py", "explicit_replacement",
  "wei-mao-2019/LearnTrajDep utils/opt.py (argparse Options, no device flag)", [])

E("ltd_demo", "demo.py", "explicit_replacement",
  "wei-mao-2019/LearnTrajDep demo.py (visualise the pretrained model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("is_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "is_cuda = torch.npu.is_available()", "otherwise the demo silently runs on CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() under is_cuda"),
    C("=ckpt = torch.load(model_path_len)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(model_path_len, map_location='npu')",
      PRETRAINED_LOAD + " (demo loads checkpoint/pretrained/*.pth.tar)"),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", CUDA_TENSOR),
    C("=all_seq = all_seq.cuda()", "tensor_to_device", "replace", True, "all_seq = all_seq.npu()", CUDA_TENSOR),
    C("idct_m = Variable(torch.from_numpy(idct_m)).float().cuda()", "tensor_to_device", "replace", True,
      "idct_m = Variable(torch.from_numpy(idct_m)).float().npu()", "not guarded by is_cuda; " + CUDA_TENSOR),
])

# ---------------------------------------------------------------------------------------------------------------
# MotionMixer (MotionMLP/MotionMixer)
# ---------------------------------------------------------------------------------------------------------------
E("mm_train_h36m", "h36m/train_mixer_h36m.py", "explicit_replacement",
  "MotionMLP/MotionMixer h36m/train_mixer_h36m.py (--dev string, train + test_mpjpe)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "--measure_time path; torch.cuda.synchronize initialises CUDA and raises; NPU is asynchronous too, so the "
      "NPU sync is what makes the timing valid"),
    C("wait for the GPU before reading the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)  # wait for the NPU before reading the clock", "second timing sync"),
    C("parser.add_argument('--dev', type=str, default='cuda:0', help='')", "device_type", "replace", True,
      "parser.add_argument('--dev', type=str, default='npu:0', help='')",
      "the device every .to(device) / map_location uses"),
    C("parser.add_argument('--device', type=str, default='cuda', choices=['cuda', 'cpu'])", "device_type",
      "replace", False,
      "parser.add_argument('--device', type=str, default='npu', choices=['npu', 'cpu'])",
      "flag is parsed but never read (the scripts use --dev); consistency only"),
])

E("mm_mlp_mixer", "h36m/mlp_mixer.py", "explicit_replacement",
  "MotionMLP/MotionMixer h36m/mlp_mixer.py (MLP-Mixer with squeeze-and-excitation)", [])

E("mm_utils", "h36m/utils/utils_mixer.py", "explicit_replacement",
  "MotionMLP/MotionMixer h36m/utils/utils_mixer.py (delta integration, losses; device-agnostic)", [])

E("mm_train_amass", "amass/train_mixer_amass.py", "explicit_replacement",
  "MotionMLP/MotionMixer amass/train_mixer_amass.py (module-level args/device, AMASS + 3DPW test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu is silently ignored on an NPU host (always NPU 0); must still run before the first NPU call - whether "
      "it is honoured after 'import torch_npu' is unconfirmed"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "no-op without CUDA; torch.manual_seed above already seeds the NPU generator (unconfirmed) - not required"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "module-level device string used in test()"),
    C("batch = batch.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch = batch.float().npu(non_blocking=True)", "train loop; " + CUDA_TENSOR),
    C("batch = batch.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
      "batch = batch.npu(non_blocking=True).float()", "validation loop; " + CUDA_TENSOR),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "(epoch + 1, val_loss, torch.npu.max_memory_allocated() / 1024 ** 3))",
      "log line only; without CUDA initialised the CUDA memory query reports 0 instead of raising (from memory, "
      "unconfirmed) - wrong number in the log, training unaffected"),
    C("model.load_state_dict(torch.load(args.model_path))", "tensor_to_device", "replace", False,
      "model.load_state_dict(torch.load(args.model_path, map_location=device))", RESUME_LOAD),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; only frees cached NPU memory once ported - not required"),
    C("use_max_pooling=False, use_se=True).cuda()", "tensor_to_device", "replace", True,
      "use_max_pooling=False, use_se=True).npu()", "Module.cuda() at construction"),
])

E("mm_requirements", "requirements.txt", "explicit_replacement",
  "MotionMLP/MotionMixer requirements (CUDA 11.1 wheels via find-links)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "removal", False, None,
      "CUDA wheel index; harmless once the +cu111 pins are gone (plain '==' pins could still match +cu local "
      "versions on x86 - unconfirmed)"),
    C("torch==1.8.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "a +cu111 build cannot be installed next to torch_npu (needs the matching CPU/aarch64 torch); add "
      "torch_npu==2.1.0.post12 beside it"),
    C("torchvision==0.9.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build of torchvision pinned to torch 1.8.1; must follow the torch pin"),
])
