"""Labels for probe476 (panoramic / 360-degree vision, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


AUTOLOAD = ("explicit import; torch_npu >= 2.5.1 autoloads on `import torch`, and nothing here pins an older "
            "torch, so not required (recommended)")

# ---------------------------------------------------------------------------
# HorizonNet (sunset1995/HorizonNet): layout estimation, --no_cuda flag + device global
# ---------------------------------------------------------------------------
E("hzn_train", "train.py", "explicit_replacement", "sunset1995/HorizonNet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("device = torch.device('cpu' if args.no_cuda else 'cuda')", "device_type", "replace", True,
      "device = torch.device('cpu' if args.no_cuda else 'npu')",
      "module-level device used by feed_forward() and .to(device); 'cuda' fails on an NPU host"),
])
E("hzn_inference", "inference.py", "explicit_replacement", "sunset1995/HorizonNet inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("device = torch.device('cpu' if args.no_cuda else 'cuda')", "device_type", "replace", True,
      "device = torch.device('cpu' if args.no_cuda else 'npu')",
      "device passed into inference(); everything else (.to(device), .cpu()) is device-agnostic"),
])
E("hzn_model", "model.py", "explicit_replacement", "sunset1995/HorizonNet model.py (encoder, GlobalHeightStage, LSTM)", [])
E("hzn_utils", "misc/utils.py", "explicit_replacement", "sunset1995/HorizonNet misc/utils.py", [])
E("hzn_dataset", "dataset.py", "explicit_replacement", "sunset1995/HorizonNet dataset.py (PanoCorBonDataset)", [])
E("hzn_eval", "eval_general.py", "explicit_replacement", "sunset1995/HorizonNet eval_general.py", [])

# ---------------------------------------------------------------------------
# LED2-Net (fuenwang/LED2-Net): YAML device, DataParallel, hard .cuda() in the net
# ---------------------------------------------------------------------------
E("led2_config", "config/config_mp3d.yaml", "explicit_replacement", "fuenwang/LED2-Net config/config_mp3d.yaml", [
    C("device: 'cuda:0'", "device_type", "replace", True, "device: 'npu:0'",
      "read by main.py as torch.device(exp_args['device'])"),
])
E("led2_main", "main.py", "explicit_replacement", "fuenwang/LED2-Net main.py (trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("self.model = nn.DataParallel(self.net)", "distributed_framework", "replace", True,
      "self.model = self.net  # nn.DataParallel is not supported on Ascend; use DDP for multi-card",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list and by msFmkTransplt; "
      "checkpoints already use self.net so dropping the wrapper is a one-line change"),
])
E("led2_network", "LED2Net/Network/Network.py", "explicit_replacement",
  "fuenwang/LED2-Net LED2Net/Network/Network.py (HorizonNet-style backbone + BiLSTM)", [
    C("h0 = torch.zeros(self.num_layers * 2, bs, self.hidden).cuda()", "tensor_to_device", "replace", True,
      "h0 = torch.zeros(self.num_layers * 2, bs, self.hidden, device=self.x_mean.device)",
      "hard .cuda() for the LSTM initial state inside forward()"),
    C("c0 = torch.zeros(self.num_layers * 2, bs, self.hidden).cuda()", "tensor_to_device", "replace", True,
      "c0 = torch.zeros(self.num_layers * 2, bs, self.hidden, device=self.x_mean.device)",
      "same as h0"),
    C("params = torch.load(name)", "device_type", "replace", True,
      "params = torch.load(name, map_location='cpu')",
      "the released pretrained weights are loaded through Load() from save_path; GPU-written tensors cannot be "
      "deserialised on a host without CUDA unless map_location is given"),
])
E("led2_conversion", "LED2Net/Conversion/EquirecTransformer.py", "explicit_replacement",
  "fuenwang/LED2-Net LED2Net/Conversion (EquirecTransformer, EquirecGrid, rotation via grid_sample)", [])
E("led2_run", "run_train.sh", "explicit_replacement", "LED2-Net-style training launcher (GPU picked with nvidia-smi)", [
    C("GPU=$(nvidia-smi --query-gpu=memory.used", "env_var", "replace", True,
      "GPU=${NPU_ID:-0}  # npu-smi has no --query-gpu CSV mode; choose the card explicitly",
      "nvidia-smi is absent on an Ascend host; the pipeline status is awk's, so set -e does not stop it and GPU ends up empty"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; config uses npu:0 relative to the visible set"),
])

# ---------------------------------------------------------------------------
# HoHoNet (sunset1995/HoHoNet): yacs config, string device, optional AMP, FPS timing
# ---------------------------------------------------------------------------
E("hoho_config", "lib/config.py", "explicit_replacement", "sunset1995/HoHoNet lib/config.py (yacs defaults)", [])
E("hoho_yaml", "config/mp3d_depth/HOHO_depth_dct_efficienthc_TransEn1.yaml", "explicit_replacement",
  "sunset1995/HoHoNet config/mp3d_depth/*.yaml", [])
E("hoho_train", "train.py", "explicit_replacement", "sunset1995/HoHoNet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("with torch.cuda.amp.autocast(enabled=config.training.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.training.amp):",
      "the shipped depth config sets training.amp: True; a CUDA autocast does not cover NPU tensors, so the run "
      "silently trains in fp32 with batch sizes tuned for fp16"),
    C("device = 'cuda' if config.cuda else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if config.cuda else 'cpu'",
      "config.cuda is just an 'use the accelerator' switch; the key name is left alone"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.training.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.training.amp)",
      "CUDA GradScaler disables itself without CUDA; pair with the NPU autocast"),
])
E("hoho_test", "test_depth.py", "explicit_replacement", "sunset1995/HoHoNet test_depth.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("device = 'cuda' if config.cuda else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if config.cuda else 'cpu'", "also feeds map_location=device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "FPS timing; torch.cuda.synchronize() raises on a host without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "same, after the forward pass"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print('Peak memory: %.1f MB' % (torch.npu.max_memory_allocated() / 1024 ** 2))",
      "log only: the CUDA call returns 0 when CUDA was never initialised"),
])
E("hoho_model", "lib/model/hohonet.py", "explicit_replacement", "sunset1995/HoHoNet lib/model/hohonet.py", [])

# ---------------------------------------------------------------------------
# UniFuse (alibaba/UniFuse-Unidirectional-Fusion): 360 depth, CUDA_VISIBLE_DEVICES in Python
# ---------------------------------------------------------------------------
E("uf_train", "UniFuse/train.py", "explicit_replacement", "alibaba/UniFuse-Unidirectional-Fusion UniFuse/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant after torch.manual_seed(seed), which also seeds the NPU generators in current torch; "
      "unconfirmed for old torch"),
])
E("uf_trainer", "UniFuse/trainer.py", "explicit_replacement", "alibaba/UniFuse-Unidirectional-Fusion UniFuse/trainer.py", [
    C('self.device = torch.device("cuda" if len(self.settings.gpu_devices) else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if len(self.settings.gpu_devices) else "cpu")', ""),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = self.gpu_devices', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = self.gpu_devices',
      "set before the first device use (lazy init), so --gpu_devices keeps selecting the card; with the CUDA "
      "name the run silently lands on card 0"),
    C("pretrained_dict = torch.load(path)", "device_type", "replace", True,
      "pretrained_dict = torch.load(path, map_location='cpu')",
      "--load_weights_dir is how the released (GPU-written) models are fine-tuned"),
    C("optimizer_dict = torch.load(optimizer_load_path)", "device_type", "replace", False,
      "optimizer_dict = torch.load(optimizer_load_path, map_location='cpu')",
      "adam.pth only exists in own training folders; matters only when resuming a GPU run on NPU"),
])
E("uf_evaluate", "UniFuse/evaluate.py", "explicit_replacement", "alibaba/UniFuse-Unidirectional-Fusion UniFuse/evaluate.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', ""),
    C("model_dict = torch.load(model_path)", "device_type", "replace", True,
      "model_dict = torch.load(model_path, map_location='cpu')",
      "evaluating the released GPU-trained checkpoints fails without map_location on a host without CUDA"),
])
E("uf_layers", "UniFuse/networks/layers.py", "explicit_replacement",
  "alibaba/UniFuse-Unidirectional-Fusion networks/layers.py (Cube2Equirec via 5-D grid_sample, CEE fusion)", [])

# ---------------------------------------------------------------------------
# Trans4PASS (jamycheng/Trans4PASS): panoramic segmentation on a SegmenTron base, DDP + NCCL
# ---------------------------------------------------------------------------
TORCH21 = "requirements are ported to torch 2.1.0 (no autoload before 2.5.1), so the import is required"
E("t4p_train", "tools/train.py", "explicit_replacement", "jamycheng/Trans4PASS tools/train.py (SegmenTron Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH21),
    C("resume_sate = torch.load(args.resume)", "device_type", "replace", False,
      "resume_sate = torch.load(args.resume, map_location='cpu')",
      "resume of own runs; only a GPU-written resume file would fail"),
    C("eta_string, torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))", "torch_cuda_api", "replace", False,
      "eta_string, torch.npu.max_memory_allocated() / 1024.0 / 1024.0))", "log value only (0 otherwise)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; releasing cached NPU memory before validation is a memory nicety"),
])
E("t4p_setup", "segmentron/utils/default_setup.py", "explicit_replacement",
  "jamycheng/Trans4PASS segmentron/utils/default_setup.py", [
    C("if not args.no_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not args.no_cuda and torch.npu.is_available():",
      "otherwise the run silently falls into the CPU branch and disables distributed"),
    C('args.device = "cuda"', "device_type", "replace", True, 'args.device = "npu"', ""),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', ""),
])
E("t4p_options", "segmentron/utils/options.py", "explicit_replacement", "jamycheng/Trans4PASS segmentron/utils/options.py", [
    C("parser.add_argument('--local_rank', type=int, default=0)", "distributed_framework", "replace", True,
      "parser.add_argument('--local_rank', '--local-rank', type=int, default=0)",
      "torch >= 2.0 torch.distributed.launch passes --local-rank; needed because the port lifts torch 1.8 -> 2.1"),
])
E("t4p_dist", "segmentron/utils/distributed.py", "explicit_replacement",
  "jamycheng/Trans4PASS segmentron/utils/distributed.py (maskrcnn-benchmark all_gather)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs device tensors"),
    C('local_size = torch.IntTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.IntTensor([tensor.numel()]).to("npu")', ""),
    C('size_list = [torch.IntTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.IntTensor([0]).to("npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', ""),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', ""),
])
E("t4p_backbone", "segmentron/models/backbones/trans4pass.py", "explicit_replacement",
  "jamycheng/Trans4PASS segmentron/models/backbones/trans4pass.py (Deformable Patch Embedding)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
      "torchvision.ops.deform_conv2d has an NPU kernel only through torchvision_npu; without it the op should "
      "take torch_npu's CPU fallback (slow) - unconfirmed for torchvision custom ops"),
])
E("t4p_sh", "tools/dist_train.sh", "explicit_replacement", "jamycheng/Trans4PASS tools/dist_train.sh", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3}", ""),
    C("export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL unless the shell already has it"),
])
E("t4p_cfg", "configs/stanford2d3d/trans4pass_tiny_1080x1080.yaml", "explicit_replacement",
  "jamycheng/Trans4PASS configs/stanford2d3d/*.yaml", [])
E("t4p_req", "requirements.txt", "explicit_replacement", "Trans4PASS install instructions as a requirements file", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "torch_npu==2.1.0.post12",
      "CUDA wheel index dropped; torch_npu pinned to the torch version (branch v2.1.0-7.0.0)"),
    C("torch==1.8.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu111 wheel cannot pair with torch_npu; torch must equal the torch_npu wheel version"),
    C("torchvision==0.9.0+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "follows torch 2.1.0 (torchvision_npu pairs 0.16.0 with torch 2.1)"),
])

# ---------------------------------------------------------------------------
# Tangent images / mapped convolution (meder411): custom CUDA extension
# ---------------------------------------------------------------------------
E("ti_setup", "setup.py", "kernel_rewrite", "meder411/Tangent-Images mapped_convolution setup.py (CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc path on Ascend"),
    C("cuda_sources = sorted(glob.glob(os.path.join('src', 'cuda', '*.cu')))", "custom_cuda_extension", "replace", True,
      "npu_sources = sorted(glob.glob(os.path.join('src', 'npu', '*.cpp')))",
      "the .cu kernels have to be rewritten (Ascend C / torch ops)"),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", ""),
    C("sources=cpp_sources + cuda_sources,", "custom_cuda_extension", "replace", True,
      "sources=cpp_sources + npu_sources,", ""),
])
E("ti_ext", "src/cpp/mapped_conv_ext.cpp", "kernel_rewrite",
  "meder411/Tangent-Images mapped_convolution pybind dispatch (CPU/CUDA)", [
    C('#include "cuda/mapped_conv_layer_cuda.h"', "custom_cuda_extension", "replace", True,
      '#include "npu/mapped_conv_layer_npu.h"', ""),
    C('#include "cuda/resample_layer_cuda.h"', "custom_cuda_extension", "replace", True,
      '#include "npu/resample_layer_npu.h"', ""),
    C("#define CHECK_CUDA(x)", "custom_cuda_extension", "replace", True,
      '#define CHECK_CUDA(x) AT_ASSERTM(x.device().is_privateuseone(), #x " must be an NPU tensor")',
      "macro name kept so its call sites stay untouched"),
    C("if (input.is_cuda()) {", "custom_cuda_extension", "replace", True,
      "if (input.device().is_privateuseone()) {", "NPU tensors would otherwise reach the CPU kernel"),
    C("return cuda::MappedConvForward(", "custom_cuda_extension", "replace", True,
      "return npu::MappedConvForward(input, sample_map, weight, bias,", ""),
    C("if (grad_output.is_cuda()) {", "custom_cuda_extension", "replace", True,
      "if (grad_output.device().is_privateuseone()) {", ""),
    C("return cuda::MappedConvBackward(", "custom_cuda_extension", "replace", True,
      "return npu::MappedConvBackward(grad_output, input, sample_map, weight,", ""),
    C("if (sample_map.is_cuda()) {", "custom_cuda_extension", "replace", True,
      "if (sample_map.device().is_privateuseone()) {", ""),
    C("return cuda::ResampleToMap(", "custom_cuda_extension", "replace", True,
      "return npu::ResampleToMap(input, sample_map, out_h, out_w, interpolation);", ""),
    C("return grad_output.device().is_cuda()", "custom_cuda_extension", "replace", True,
      "return grad_output.device().is_privateuseone()", ""),
    C("? cuda::ResampleFromMap(", "custom_cuda_extension", "replace", True,
      "? npu::ResampleFromMap(grad_output, sample_map, interpolation)", ""),
])
E("ti_func", "mapped_convolution/nn/functions/mapped_conv.py", "kernel_rewrite",
  "meder411/Tangent-Images mapped_convolution autograd Functions", [])
E("ti_manager", "mapped_convolution/util/network_manager.py", "explicit_replacement",
  "meder411/Tangent-Images mapped_convolution/util/network_manager.py", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "default path silently trains on CPU"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "forward-time meter; raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "memory nicety"),
    C("checkpoint = torch.load(checkpoint_path)", "device_type", "replace", True,
      "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
      "used to load the released pretrained (GPU-written) weights"),
])
E("ti_example", "examples/stanford2d3d/train_semseg.py", "explicit_replacement",
  "meder411/Tangent-Images examples/stanford2d3d semantic-segmentation script (module-level parameters)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the Docker environment is ported to torch 2.1.0 (no autoload)"),
    C("device = torch.device('cuda', device_ids[0])", "device_type", "replace", True,
      "device = torch.device('npu', device_ids[0])", ""),
    C("x = torch.cat(inputs, 1).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "x = torch.cat(inputs, 1).to(self.device, non_blocking=True)", ""),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.to(self.device, non_blocking=True)", ""),
    C("dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "class_weights = torch.tensor(train_dataset.class_weights(), dtype=torch.float32).to(device)", ""),
])
E("ti_docker", "Dockerfile", "explicit_replacement", "meder411/Tangent-Images Dockerfile", [
    C("FROM nvidia/cuda:10.1-cudnn7-devel-ubuntu18.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CANN base image instead of the CUDA devel image (image tag unconfirmed)"),
    C("RUN conda install -y pytorch==1.4.0 torchvision==0.5.0 cudatoolkit=10.1 -c pytorch", "import_torch_npu",
      "replace", True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch_npu==2.1.0.post12",
      "cudatoolkit build of torch cannot host torch_npu; x86 takes the CPU torch wheel (version must equal torch_npu's)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5"', "env_var", "removal", False, None, "inert without nvcc"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "inert; path does not exist"),
])
