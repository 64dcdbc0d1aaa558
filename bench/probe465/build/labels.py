# Labels for probe465 (learned image / video compression). One careful porter's judgement.
# required = complete-port counterfactual: with every other labelled line already ported, would leaving
# this line unchanged fail, compute something wrong, or silently do the wrong thing on an NPU host?

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: torch.npu / 'npu' device strings need the torch_npu backend loaded "
               "(auto-loaded only from torch_npu 2.5.1 on); insert `import torch_npu` after `import torch`")

# ---------------------------------------------------------------- CompressAI (InterDigitalInc/CompressAI)
E("cai_train", "examples/train.py", "explicit_replacement",
  "InterDigitalInc/CompressAI examples/train.py (reference training script, --cuda flag, CustomDataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if args.cuda and torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if args.cuda and torch.npu.is_available() else "cpu"',
      "unchanged, torch.cuda.is_available() is False on an NPU host and training silently runs on the CPU"),
    C("        pin_memory=(device == \"cuda\"),", "pin_memory", "replace", False,
      'pin_memory=(device == "npu"),',
      "after the device port the comparison is always False, so batches are no longer pinned: throughput only"),
    C('shuffle=False, pin_memory=(device == "cuda"),', "pin_memory", "replace", False,
      'shuffle=False, pin_memory=(device == "npu"),', "same as the train loader; performance only"),
    C("if args.cuda and torch.cuda.device_count() > 1:", "distributed_framework", "replace", False,
      "if False and args.cuda and torch.npu.device_count() > 1:  # nn.DataParallel is unsupported on NPU; use DDP",
      "CustomDataParallel subclasses nn.DataParallel (marked unsupported in Ascend's 2.7.1 API list). Left "
      "unchanged, torch.cuda.device_count() is 0 on an NPU host so the DP branch is skipped and training runs "
      "on one NPU, which works; a careful porter still disables the branch explicitly"),
])

E("cai_eval", "compressai/utils/eval_model/__main__.py", "explicit_replacement",
  "InterDigitalInc/CompressAI compressai/utils/eval_model/__main__.py (image codec evaluation CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if args.cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.cuda and torch.npu.is_available():",
      "unchanged, the --cuda run silently evaluates (and times) the model on the CPU"),
    C('model = model.to("cuda")', "tensor_to_device", "replace", True, 'model = model.to("npu")',
      "'cuda' device string fails without CUDA"),
])

E("cai_entropy", "compressai/entropy_models/entropy_models.py", "explicit_replacement",
  "InterDigitalInc/CompressAI compressai/entropy_models/entropy_models.py (EntropyBottleneck, GaussianConditional)", [
])

E("cai_setup", "setup.py", "explicit_replacement",
  "InterDigitalInc/CompressAI setup.py (pybind11 rANS/_CXX extensions, CPU only)", [
])

E("cai_video_eval", "compressai/utils/video/eval_model/__main__.py", "explicit_replacement",
  "InterDigitalInc/CompressAI compressai/utils/video/eval_model/__main__.py (SSF video model evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if args.cuda and torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if args.cuda and torch.npu.is_available() else "cpu"',
      "unchanged, the evaluation silently runs on the CPU"),
    C('with torch.autocast(device_type="cuda", enabled=args.half):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", enabled=args.half):',
      "with device_type='cuda' and no CUDA, autocast warns and disables itself, so --half silently runs "
      "in fp32 on the NPU"),
])

# ---------------------------------------------------------------- DCVC (microsoft/DCVC: DCVC-RT + DCVC-FM)
E("dcvc_test_video", "test_video.py", "explicit_replacement",
  "microsoft/DCVC test_video.py (DCVC-RT multi-process test harness, per-worker CUDA_VISIBLE_DEVICES, fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; with the spawn start method the workers re-import this module, so they get it too"),
    C("torch.cuda.synchronize(device=device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device=device)",
      "torch.cuda.synchronize() with an NPU device raises; used to start the per-frame encoding clock"),
    C("torch.cuda.synchronize(device)  # wait for the GPU", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)  # wait for the NPU before stopping the clock",
      "same as above (stop of the per-frame clock)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
      "per-worker device pinning; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every worker "
      "would silently pile onto npu:0. Set before the worker touches the device, as upstream does"),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"',
      "worker device string"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = cuda_device", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cuda_device",
      "restricts the parent's device count to --cuda_idx; unchanged, gpu_num counts every NPU and "
      "args.cuda_idx[gpu_id] in init_func goes out of range"),
    C("gpu_num = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpu_num = torch.npu.device_count()",
      "unchanged this is 0 on an NPU host and every worker silently runs the codec on the CPU"),
])

E("dcvc_cuda_inference", "src/layers/cuda_inference.py", "explicit_replacement",
  "microsoft/DCVC src/layers/cuda_inference.py (optional fused CUDA kernels with PyTorch fallback)", [
])

E("dcvc_ext_setup", "src/layers/extensions/inference/setup.py", "kernel_rewrite",
  "microsoft/DCVC src/layers/extensions/inference/setup.py (CUDAExtension for the fast inference kernels)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the .cu kernels would have to be rewritten in Ascend C; the Python side already falls back to "
      "PyTorch when the module is missing, so skipping this build is enough to run"),
    C("CUDAExtension(", "custom_cuda_extension", "replace", False, "NpuExtension(",
      "optional speed-up only (see cuda_inference.py fallback); nvcc flags below go with it"),
])

E("dcvc_cpp_setup", "src/cpp/setup.py", "explicit_replacement",
  "microsoft/DCVC src/cpp/setup.py (pybind11 rANS entropy coder, CPU)", [
])

E("dcvc_common", "src/utils/common.py", "explicit_replacement",
  "microsoft/DCVC src/utils/common.py (set_torch_env, json dump, checkpoint loading)", [
])

E("dcvc_video_net", "DCVC-FM/src/models/video_net.py", "explicit_replacement",
  "microsoft/DCVC DCVC-FM/src/models/video_net.py (SpyNet motion estimation, grid_sample flow warp)", [
])

E("dcvc_dataset_cfg", "dataset_config_example_yuv420.json", "explicit_replacement",
  "microsoft/DCVC dataset_config_example_yuv420.json (test sequence list)", [
])

E("dcvc_requirements", "requirements.txt", "explicit_replacement",
  "microsoft/DCVC requirements.txt (pinned torch with CUDA wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu126", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend pairs torch_npu with the CPU torch build on x86; whether the cu126 build also works with "
      "torch_npu is unconfirmed"),
    C("=torch==2.6.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.6.0.post3",
      "torch_npu wheel must match torch 2.6.0 (2.6.0.post3 pairs with CANN 8.3.RC1)"),
])

E("dcvc_dockerfile", "Dockerfile", "explicit_replacement",
  "microsoft/DCVC-style Dockerfile (pytorch CUDA devel base image, builds both extensions)", [
    C("FROM pytorch/pytorch:2.6.0-cuda12.6-cudnn9-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "a CUDA base image has no CANN runtime; tag naming follows Ascend/cann-container-image, registry "
      "prefix unconfirmed"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;8.9;9.0"', "custom_cuda_extension", "removal", False, None,
      "inert without nvcc"),
    C("RUN cd src/layers/extensions/inference && pip install --no-cache-dir .", "custom_cuda_extension", "removal",
      True, None,
      "CUDAExtension build fails without nvcc and breaks the image build; the code falls back to PyTorch"),
])

E("dcvc_test_sh", "test.sh", "explicit_replacement",
  "microsoft/DCVC README test command wrapped as a launcher script", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not needed when the login shell or container already sets it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "redundant once test_video.py sets ASCEND_RT_VISIBLE_DEVICES from --cuda_idx; inert on NPU as written"),
    C("nvidia-smi --query-gpu=name,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host; under set -e the script exits 127 after the run"),
])

# ---------------------------------------------------------------- DVC (ZhihaoHu/PyTorchVideoCompression)
E("dvc_main", "DVC/main.py", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/main.py (DVC training, module-level gpu_num, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpu_num = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpu_num = torch.npu.device_count()",
      "0 on an NPU host: the train loader gets batch_size=0 and DataLoader raises"),
    C("return Variable(x.cuda())", "tensor_to_device", "replace", True, "return Variable(x.npu())",
      "every training/test input goes through Var()"),
    C("net = model.cuda()", "tensor_to_device", "replace", True, "net = model.npu()", ""),
    C("net = torch.nn.DataParallel(net, list(range(gpu_num)))", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU (Ascend API list); drop it (single NPU) or rewrite for DDP+HCCL. "
      "save_model(model, ...) already saves the unwrapped model"),
])

E("dvc_net", "DVC/net.py", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/net.py (VideoCompressor, torchac real-bit estimation, load_model)", [
    C("pretrained_dict = torch.load(f)", "device_type", "replace", True,
      "pretrained_dict = torch.load(f, map_location='cpu')",
      "the released DVC snapshots were saved from CUDA tensors; deserialising them without CUDA raises"),
    C("real_bits = torch.from_numpy(np.array([len(byte_stream) * 8])).float().cuda()", "tensor_to_device",
      "replace", True, "real_bits = torch.from_numpy(np.array([len(byte_stream) * 8])).float().npu()",
      "real-bitrate path (calrealbits) at test time"),
    C("real_bits = torch.sum(torch.from_numpy(np.array([len(byte_stream) * 8])).float().cuda())",
      "tensor_to_device", "replace", True,
      "real_bits = torch.sum(torch.from_numpy(np.array([len(byte_stream) * 8])).float().npu())", "same, for z"),
])

E("dvc_basics", "DVC/subnet/basics.py", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/subnet/basics.py (torch_warp grid cache, helpers)", [
    C("Backward_tensorGrid[str(tensorFlow.size())] = torch.cat([tensorHorizontal, tensorVertical], 1).cuda()",
      "tensor_to_device", "replace", True,
      "Backward_tensorGrid[str(tensorFlow.size())] = torch.cat([tensorHorizontal, tensorVertical], 1).to(tensorFlow.device)",
      "the cached sampling grid is created on CUDA; every flow warp goes through it"),
])

E("dvc_bitest", "DVC/subnet/bitEstimator.py", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/subnet/bitEstimator.py (factorized bit estimator)", [
])

E("dvc_config", "DVC/examples/example/config.json", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/examples/example/config.json", [
])

E("dvc_cp_sh", "DVC/examples/example/cp.sh", "explicit_replacement",
  "ZhihaoHu/PyTorchVideoCompression DVC/examples/example/cp.sh (training launcher)", [
    C("export PYTHONPATH=$PYTHONPATH:$ROOT", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not needed when the shell already sets it"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/main.py --log log.txt --config config.json",
      "ignored by the Ascend runtime: gpu_num counts every NPU, which changes batch size and worker count"),
])

# ---------------------------------------------------------------- LIC_TCM (jmliu206/LIC_TCM)
E("tcm_train", "train.py", "explicit_replacement",
  "jmliu206/LIC_TCM train.py (CompressAI-derived training with --gpu_id and CustomDataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above is expected to seed the NPU generators too (unconfirmed); unchanged the "
      "CUDA call is a silent no-op"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "ignored on Ascend, so --gpu_id silently has no effect (always npu:0 / all NPUs visible)"),
    C('device = "cuda" if args.cuda and torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if args.cuda and torch.npu.is_available() else "cpu"',
      "unchanged, training silently runs on the CPU"),
    C('print(f"training on {device}, {torch.cuda.device_count()} visible GPU(s)")', "torch_cuda_api", "replace",
      False, 'print(f"training on {device}, {torch.npu.device_count()} visible NPU(s)")',
      "log line only; torch.cuda.device_count() returns 0 without error"),
    C("        pin_memory=(device == \"cuda\"),", "pin_memory", "replace", False, 'pin_memory=(device == "npu"),',
      "performance only"),
    C('shuffle=False, pin_memory=(device == "cuda"),', "pin_memory", "replace", False,
      'shuffle=False, pin_memory=(device == "npu"),', "performance only"),
    C("if args.cuda and torch.cuda.device_count() > 1:", "distributed_framework", "replace", False,
      "if False and args.cuda and torch.npu.device_count() > 1:  # nn.DataParallel is unsupported on NPU",
      "as in CompressAI's train.py: unchanged it evaluates to False on NPU, which is the safe outcome"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "log only; the CUDA allocator is never initialised, so it silently reports 0"),
])

E("tcm_eval", "eval.py", "explicit_replacement",
  "jmliu206/LIC_TCM eval.py (real entropy coding / forward eval with synchronize-based timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA when --cuda is set"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", ""),
    C("torch.cuda.synchronize()  # flush pending kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # flush pending kernels before timing", "raises without CUDA"),
    C("torch.cuda.synchronize()  # make sure decoding finished", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure decoding finished", "raises without CUDA"),
    C("print(torch.cuda.is_available())", "torch_cuda_api", "replace", False, "print(torch.npu.is_available())",
      "diagnostic print only"),
])

E("tcm_models", "models/tcm.py", "explicit_replacement",
  "jmliu206/LIC_TCM models/tcm.py (Swin-window attention + CNN mixed blocks, channel-wise entropy model)", [
])

E("tcm_requirements", "requirements.txt", "explicit_replacement",
  "jmliu206/LIC_TCM environment as a pinned requirements file (cu118 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CPU torch is what Ascend documents for x86; cu118 build with torch_npu unconfirmed"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "the +cu118 local version only exists on the CUDA index; with the index ported this pin cannot resolve"),
    C("torchvision==0.16.0+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "same coupling as the torch pin: the +cu118 build only exists on the CUDA index"),
    C("compressai==1.2.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "insert the matching torch_npu wheel before compressai (2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1)"),
])

# ---------------------------------------------------------------- L3C / torchac (fab-jul/L3C-PyTorch)
E("l3c_pytorch_ext", "src/pytorch_ext.py", "explicit_replacement",
  "fab-jul/L3C-PyTorch src/pytorch_ext.py (module-level DEVICE global and tensor helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; this module queries the device at import time"),
    C("DEVICE = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "module-level default device used by training and testing; unchanged everything silently runs on the CPU"),
    C("DEVICE = torch.device('cuda:0' if cuda_available else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu:0' if cuda_available else 'cpu')", "explicit override path"),
])

E("l3c_torchac", "src/torchac/torchac.py", "explicit_replacement",
  "fab-jul/L3C-PyTorch src/torchac/torchac.py (dispatch between CPU and CUDA arithmetic-coder backends)", [
    C("return torchac_backend_cpu.encode_logistic_mixture(targets, means", "tensor_to_device", "replace", True,
      "return torchac_backend_cpu.encode_logistic_mixture(targets.cpu(), means.cpu(), log_scales.cpu(), logit_probs_softmax.cpu(), sym.cpu())",
      "NPU tensors are not is_cuda, so they fall through to the C++ CPU backend, which reads host memory"),
    C("return torchac_backend_cpu.decode_logistic_mixture(targets, means", "tensor_to_device", "replace", True,
      "return torchac_backend_cpu.decode_logistic_mixture(targets.cpu(), means.cpu(), log_scales.cpu(), logit_probs_softmax.cpu(), input_string)",
      "same for decoding"),
])

E("l3c_torchac_setup", "src/torchac/setup.py", "explicit_replacement",
  "fab-jul/L3C-PyTorch src/torchac/setup.py (COMPILE_CUDA=auto chooses CUDAExtension or CppExtension)", [
])

E("l3c_tester", "src/test/multiscale_tester.py", "explicit_replacement",
  "fab-jul/L3C-PyTorch src/test/multiscale_tester.py (bpsp evaluation and timing)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged the guard is False on NPU, no sync happens and the forward timings silently measure launch time"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard ported, the CUDA call would raise"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; only affects cached-memory release between huge test images (unconfirmed OOM risk)"),
])

# ---------------------------------------------------------------- HiFiC PyTorch (Justin-Tan/high-fidelity-generative-compression)
E("hific_utils", "src/helpers/utils.py", "explicit_replacement",
  "Justin-Tan/high-fidelity-generative-compression src/helpers/utils.py (get_device, save/load checkpoints)", [
    C('return torch.device("cuda" if torch.cuda.is_available() and is_gpu', "device_type", "replace", True,
      'return torch.device("npu" if torch.npu.is_available() and is_gpu',
      "single device helper used by train.py and compress.py; unchanged everything silently runs on the CPU"),
    C("checkpoint = torch.load(save_path)", "device_type", "replace", True,
      "checkpoint = torch.load(save_path, map_location='cpu')",
      "save_model moves the model to CPU but the optimizer states stay on CUDA, so the published checkpoints "
      "cannot be deserialised without CUDA"),
])

E("hific_train", "train.py", "explicit_replacement",
  "Justin-Tan/high-fidelity-generative-compression train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(cmd_args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(cmd_args.gpu)",
      "raises without CUDA whenever --gpu != 0 or --force_set_gpu"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpus = torch.npu.device_count()",
      "only gates a branch that raises NotImplementedError anyway; 0 just skips it"),
])

E("hific_lpips", "src/loss/perceptual_similarity/dist_model.py", "explicit_replacement",
  "Justin-Tan/high-fidelity-generative-compression src/loss/perceptual_similarity/dist_model.py (vendored LPIPS)", [
    C("self.net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "self.net.to(f'npu:{gpu_ids[0]}')",
      "an int device index means a CUDA ordinal; LPIPS is the perceptual term of the HiFiC loss"),
    C("self.net = torch.nn.DataParallel(self.net, device_ids=gpu_ids)", "distributed_framework", "removal", True,
      None, "nn.DataParallel is unsupported on NPU; the wrapped net is only ever used on one device here"),
    C("self.rankLoss = self.rankLoss.to(device=gpu_ids[0])", "tensor_to_device", "replace", False,
      "self.rankLoss = self.rankLoss.to(device=f'npu:{gpu_ids[0]}')  # just put this on NPU0",
      "LPIPS's own training path (is_train); HiFiC never reaches it"),
    C("self.input_ref = self.input_ref.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", False,
      "self.input_ref = self.input_ref.to(device=f'npu:{self.gpu_ids[0]}')", "LPIPS training only"),
    C("self.input_p0 = self.input_p0.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", False,
      "self.input_p0 = self.input_p0.to(device=f'npu:{self.gpu_ids[0]}')", "LPIPS training only"),
    C("self.input_p1 = self.input_p1.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", False,
      "self.input_p1 = self.input_p1.to(device=f'npu:{self.gpu_ids[0]}')", "LPIPS training only"),
    C("self.input_judge = self.input_judge.to(device=self.gpu_ids[0])", "tensor_to_device", "replace", False,
      "self.input_judge = self.input_judge.to(device=f'npu:{self.gpu_ids[0]}')", "LPIPS training only"),
])
