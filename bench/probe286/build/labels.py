# Labels for probe286: GAN inversion and latent-space image editing (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# Ported lines are plausible, untested replacements.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TORCH_NPU_PIN = "torch-npu==2.1.0.post12"

# ---------------------------------------------------------------- pSp / e4e / ReStyle / HyperStyle

E("psp_op_fused_act", "models/stylegan2/op/fused_act.py", "kernel_rewrite",
  "rosinality stylegan2-pytorch op/fused_act.py as vendored by pSp/e4e/ReStyle (JIT-built fused_bias_act CUDA op)",
  [
      C("fused = load(", "custom_cuda_extension", "replace", True,
        'fused = load("fused", sources=[...]) if torch.cuda.is_available() else None',
        "cpp_extension.load JIT-compiles a .cu file with nvcc at import time; no nvcc/CUDA on an Ascend host "
        "(cpp_extension.load is marked unsupported in Ascend's 2.7.1 API list), so importing the model fails"),
      C('if input.device.type == "cpu":', "custom_cuda_extension", "replace", True,
        'if input.device.type != "cuda":',
        "only CPU tensors take the reference path; NPU tensors would go to FusedLeakyReLUFunction and call the "
        "CUDA-only fused.fused_bias_act kernel. Route every non-CUDA device to the F.leaky_relu reference path"),
  ])

E("psp_op_upfirdn2d", "models/stylegan2/op/upfirdn2d.py", "kernel_rewrite",
  "pSp-era copy of rosinality op/upfirdn2d.py (unconditional CUDA op, native version kept only for debugging)",
  [
      C("upfirdn2d_op = load(", "custom_cuda_extension", "replace", True,
        "upfirdn2d_op = load('upfirdn2d', sources=[...]) if torch.cuda.is_available() else None",
        "nvcc JIT build of upfirdn2d_kernel.cu at import time fails on an Ascend host"),
      C("out = UpFirDn2d.apply(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type != 'cuda': return upfirdn2d_native(input.permute(0, 2, 3, 1), kernel, up, up, down, down, pad[0], pad[1], pad[0], pad[1]).permute(0, 3, 1, 2)",
        "this version has no device check at all: every call goes to the CUDA extension; add a branch to the "
        "pure-PyTorch upfirdn2d_native (pad/conv2d/flip, all with NPU kernels)"),
  ])

E("psp_stylegan2_model", "models/stylegan2/model.py", "device_branch_or_abstraction",
  "rosinality StyleGAN2 Generator/Discriminator as vendored in pSp/e4e (modulated conv, noise buffers)",
  [])

E("e4e_coach", "training/coach.py", "explicit_replacement",
  "encoder4editing training/coach.py (pSp coach + latent discriminator, progressive stages, R1)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "scripts/train.py imports nothing from torch itself; this module is the first torch import of the training process"),
      C("self.device = 'cuda:0'", "device_type", "replace", True,
        "self.device = 'npu:0'",
        "hard-coded CUDA device; also copied into opts.device and saved in every checkpoint's opts"),
  ])

E("e4e_psp_model", "models/psp.py", "explicit_replacement",
  "encoder4editing models/psp.py (pSp wrapper: encoder + StyleGAN2 decoder, latent_avg handling)",
  [
      C("encoder_ckpt = torch.load(model_paths['ir_se50'])", "tensor_to_device", "replace", False,
        "encoder_ckpt = torch.load(model_paths['ir_se50'], map_location='cpu')",
        "unconfirmed: if the ArcFace IR-SE50 weights were saved with CUDA storages, torch.load without map_location "
        "raises on a host without CUDA"),
      C("ckpt = torch.load(self.opts.stylegan_weights)", "tensor_to_device", "replace", False,
        "ckpt = torch.load(self.opts.stylegan_weights, map_location='cpu')",
        "unconfirmed: converted FFHQ weights are probably CPU tensors, but StyleGAN2 checkpoints trained with "
        "rosinality train.py hold CUDA storages and would fail to deserialize on an NPU host"),
  ])

E("psp_moco_loss", "criteria/moco_loss.py", "explicit_replacement",
  "pSp/e4e/ReStyle criteria/moco_loss.py (frozen MoCo-v2 ResNet-50 similarity loss)",
  [
      C("self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model.npu()",
        "Module.cuda() raises without a CUDA build; the caller's .to(device) comes later"),
      C("model = nn.Sequential(*list(model.children())[:-1]).cuda()", "tensor_to_device", "replace", True,
        "model = nn.Sequential(*list(model.children())[:-1]).npu()",
        "same .cuda() inside the loader"),
  ])

E("e4e_inference", "scripts/inference.py", "explicit_replacement",
  "encoder4editing scripts/inference.py (batch inversion to latents.pt + reconstructions)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; registers the npu device before 'npu' strings are used"),
      C('device = "cuda"', "device_type", "replace", True,
        'device = "npu"',
        "global device passed to setup_model (which also writes it into opts.device) and every .to(device)"),
  ])

E("restyle_inference_utils", "utils/inference_utils.py", "explicit_replacement",
  "ReStyle / HyperStyle utils/inference_utils.py (average image, iterative refinement loops)",
  [
      C("avg_image = avg_image.to('cuda').float().detach()", "tensor_to_device", "replace", True,
        "avg_image = avg_image.to(net.latent_avg.device).float().detach()",
        "hard-coded 'cuda' device string; the average image is concatenated with NPU inputs"),
  ])

E("restyle_inference_iterative", "scripts/inference_iterative.py", "explicit_replacement",
  "ReStyle scripts/inference_iterative.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("opts.update(vars(test_opts))", "device_type", "npu_only_addition", True,
        "opts['device'] = 'npu:0'",
        "the training checkpoint's opts carry device='cuda:0' (set by the coach and saved with the checkpoint); "
        "pSp/e4e load_weights does ckpt['latent_avg'].to(self.opts.device), which fails on an NPU host unless the "
        "device is overridden here"),
      C("net.cuda()", "tensor_to_device", "replace", True,
        "net.npu()",
        "Module.cuda() raises without CUDA"),
      C("input_cuda = input_batch.cuda().float()", "tensor_to_device", "replace", True,
        "input_cuda = input_batch.npu().float()",
        "Tensor.cuda() raises without CUDA (variable name can stay)"),
  ])

E("e4e_ganspace_edit", "editings/ganspace.py", "explicit_replacement",
  "encoder4editing editings/ganspace.py (GANSpace PCA edits on W+ inversions)",
  [
      C("delta_padded = torch.zeros(latent.shape).to('cuda')", "tensor_to_device", "replace", True,
        "delta_padded = torch.zeros(latent.shape, device=latent.device)",
        "hard-coded 'cuda'"),
      C("w_centered = latent - pca['mean'].to('cuda')", "tensor_to_device", "replace", True,
        "w_centered = latent - pca['mean'].to(latent.device)",
        "hard-coded 'cuda'"),
      C("lat_comp = pca['comp'].to('cuda')", "tensor_to_device", "replace", True,
        "lat_comp = pca['comp'].to(latent.device)",
        "hard-coded 'cuda'"),
      C("lat_std = pca['std'].to('cuda')", "tensor_to_device", "replace", True,
        "lat_std = pca['std'].to(latent.device)",
        "hard-coded 'cuda'"),
  ])

E("hyperstyle_model", "models/hyperstyle.py", "explicit_replacement",
  "HyperStyle models/hyperstyle.py (hypernetwork weight offsets on top of a frozen e4e W encoder)",
  [
      C("w_net.cuda()", "tensor_to_device", "replace", True,
        "w_net.to(self.opts.device)",
        "the pretrained e4e W encoder is moved with .cuda(), which raises without CUDA"),
  ])

E("hyperstyle_model_utils", "utils/model_utils.py", "explicit_replacement",
  "HyperStyle utils/model_utils.py (load_model / load_generator helpers used by notebooks and editing scripts)",
  [
      C("def load_model(checkpoint_path, device='cuda', update_opts=None, is_restyle_encoder=False):",
        "device_type", "replace", True,
        "def load_model(checkpoint_path, device='npu', update_opts=None, is_restyle_encoder=False):",
        "notebooks and editing scripts call load_model(path, update_opts=...) and rely on the default; it also "
        "becomes opts.device, used for latent_avg"),
      C("def load_generator(checkpoint_path, output_size=1024, device='cuda'):", "device_type", "replace", True,
        "def load_generator(checkpoint_path, output_size=1024, device='npu'):",
        "domain-adaptation scripts call load_generator(path) with the default device"),
  ])

E("hyperstyle_env", "environment/hyperstyle_env.yaml", "explicit_replacement",
  "HyperStyle / ReStyle environment/*_env.yaml conda export (pytorch channel CUDA build)",
  [
      C("cudatoolkit=10.2.89=hfd86e86_1", "torch_cuda_api", "removal", False, None,
        "CUDA runtime for the CUDA build of pytorch; dead weight once that build is gone"),
      C("pytorch=1.7.1=py3.8_cuda10.2.89_cudnn7.6.5_0", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0=py3.8_cpu_0",
        "CUDA build of torch 1.7.1; torch_npu needs a matching CPU torch (e.g. 2.1.0 for torch-npu 2.1.0.postN); "
        "no torch_npu exists for 1.7"),
      C("torchvision=0.8.2=py38_cu102", "torch_cuda_api", "replace", True,
        "- torchvision=0.16.0=py38_cpu",
        "cu102 torchvision pins torch 1.7.1 and cannot coexist with the NPU torch"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - " + TORCH_NPU_PIN,
        "torch-npu wheel must be added to the environment, version-matched to torch"),
  ])

E("restyle_train_sh", "scripts/train_restyle_e4e_ffhq.sh", "explicit_replacement",
  "ReStyle-e4e FFHQ training launcher (single GPU, shell wrapper around scripts/train_restyle_e4e.py)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "CANN environment must be sourced or torch_npu fails to import (libhccl/libascendcl not found)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
        "the CANN runtime ignores CUDA_VISIBLE_DEVICES; with a user-chosen id the job silently lands on NPU 0"),
      C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts here"),
  ])

# ---------------------------------------------------------------- StyleCLIP

E("styleclip_optimization", "optimization/run_optimization.py", "explicit_replacement",
  "StyleCLIP optimization/run_optimization.py (latent optimization with CLIP loss)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("text_inputs = torch.cat([clip.tokenize(args.description)]).cuda()", "tensor_to_device", "replace", True,
        "text_inputs = torch.cat([clip.tokenize(args.description)]).npu()",
        "Tensor.cuda()"),
      C('g_ema.load_state_dict(torch.load(args.ckpt)["g_ema"], strict=False)', "tensor_to_device", "replace", False,
        'g_ema.load_state_dict(torch.load(args.ckpt, map_location="cpu")["g_ema"], strict=False)',
        "unconfirmed: only fails if the StyleGAN2 checkpoint holds CUDA storages (self-trained rosinality checkpoints do)"),
      C("g_ema = g_ema.cuda()", "tensor_to_device", "replace", True,
        "g_ema = g_ema.npu()",
        "Module.cuda()"),
      C("latent_code_init = torch.load(args.latent_path).cuda()", "tensor_to_device", "replace", True,
        "latent_code_init = torch.load(args.latent_path, map_location='cpu').npu()",
        "Tensor.cuda(); e4e latents produced on a GPU box also need map_location"),
      C("latent_code_init_not_trunc = torch.randn(1, 512).cuda()", "tensor_to_device", "replace", True,
        "latent_code_init_not_trunc = torch.randn(1, 512).npu()",
        "Tensor.cuda()"),
  ])

E("styleclip_clip_loss", "criteria/clip_loss.py", "explicit_replacement",
  "StyleCLIP criteria/clip_loss.py",
  [
      C('clip.load("ViT-B/32", device="cuda")', "device_type", "replace", True,
        'self.model, self.preprocess = clip.load("ViT-B/32", device="npu")',
        "CLIP is loaded straight onto 'cuda'; clip.load keeps fp16 weights for any non-'cpu' device, as on GPU"),
  ])

E("styleclip_mapper_coach", "mapper/training/coach.py", "explicit_replacement",
  "StyleCLIP mapper/training/coach.py (latent mapper training, tab-indented)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "mapper/scripts/train.py imports this coach before touching torch; first torch import of the process"),
      C("self.device = 'cuda:0'", "device_type", "replace", True,
        "self.device = 'npu:0'",
        "hard-coded device, also propagated to opts.device and into the mapper checkpoint"),
      C("self.text_inputs = torch.cat([clip.tokenize(self.opts.description)]).cuda()", "tensor_to_device",
        "replace", True,
        "self.text_inputs = torch.cat([clip.tokenize(self.opts.description)]).to(self.device)",
        "Tensor.cuda()"),
      C("train_latents = torch.load(self.opts.latents_train_path)", "tensor_to_device", "replace", False,
        "train_latents = torch.load(self.opts.latents_train_path, map_location='cpu')",
        "unconfirmed: the released train_faces.pt latents may have been saved from GPU tensors"),
      C("train_latents_z = torch.randn(self.opts.train_dataset_size, 512).cuda()", "tensor_to_device", "replace",
        True,
        "train_latents_z = torch.randn(self.opts.train_dataset_size, 512).to(self.device)",
        "Tensor.cuda()"),
      C("test_latents = torch.load(self.opts.latents_test_path)", "tensor_to_device", "replace", False,
        "test_latents = torch.load(self.opts.latents_test_path, map_location='cpu')",
        "unconfirmed, same as the training latents"),
      C("test_latents_z = torch.randn(self.opts.train_dataset_size, 512).cuda()", "tensor_to_device", "replace",
        True,
        "test_latents_z = torch.randn(self.opts.train_dataset_size, 512).to(self.device)",
        "Tensor.cuda()"),
  ])

E("styleclip_global_manipulate", "global_torch/manipulate.py", "explicit_replacement",
  "StyleCLIP global_torch/manipulate.py (StyleSpace Manipulator on a stylegan2-ada-pytorch pickle)",
  [
      C("self.device = torch.device('cuda')", "device_type", "replace", True,
        "self.device = torch.device('npu')",
        "generator is loaded onto an explicit cuda device"),
      C("d[self.s_names[m]] = torch.from_numpy(codes[m][i, k][None, :]).to('cuda')", "tensor_to_device",
        "replace", True,
        "d[self.s_names[m]] = torch.from_numpy(codes[m][i, k][None, :]).to(self.device)",
        "hard-coded 'cuda' per style code"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on an NPU host (CUDA never initialised), so the NPU cache is simply not released"),
  ])

E("styleclip_global_main", "global_torch/StyleCLIP.py", "device_branch_or_abstraction",
  "StyleCLIP global directions script (GetDt / GetBoundary / zero-shot CLIP text templates)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("texts = clip.tokenize(texts).cuda()  # tokenize", "tensor_to_device", "replace", True,
        "texts = clip.tokenize(texts).to(next(model.parameters()).device)  # tokenize",
        "Tensor.cuda() in the CLIP zero-shot text embedding"),
      C("zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()", "tensor_to_device", "replace", True,
        "zeroshot_weights = torch.stack(zeroshot_weights, dim=1)",
        "Tensor.cuda(); the stacked embeddings are already on the CLIP device"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
        "on an NPU host torch.cuda.is_available() is False, so CLIP silently runs on the CPU while the generator "
        "is on the NPU"),
  ])

E("nada_requirements", "requirements.txt", "explicit_replacement",
  "StyleGAN-NADA / StyleCLIP style requirements.txt pinned to cu113 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA 11.3 wheel index; torch_npu pairs with the CPU torch build on x86 (plain PyPI on aarch64)"),
      C("torch==1.10.2+cu113", "torch_cuda_api", "replace", True,
        "torch==2.1.0",
        "CUDA build, and no torch_npu release exists for torch 1.10"),
      C("torchvision==0.11.3+cu113", "torch_cuda_api", "replace", True,
        "torchvision==0.16.0",
        "cu113 torchvision pins torch 1.10.2+cu113"),
      C("git+https://github.com/openai/CLIP.git", "import_torch_npu", "npu_only_addition", True,
        TORCH_NPU_PIN,
        "torch-npu pin added to the requirements (after the last entry)"),
  ])

E("nada_zssgan", "ZSSGAN/model/ZSSGAN.py", "explicit_replacement",
  "StyleGAN-NADA ZSSGAN/model/ZSSGAN.py (frozen/trainable StyleGAN2 pair with CLIP directional loss)",
  [
      C("map_layers=8, img_size=256, channel_multiplier=2, device='cuda:0'):", "device_type", "replace", True,
        "def __init__(self, checkpoint_path, latent_size=512, map_layers=8, img_size=256, channel_multiplier=2, device='npu:0'):",
        "ZSSGAN builds both generators without passing device, so the default drives .to(device) and "
        "torch.load(map_location='cuda:0')"),
      C("def __init__(self, checkpoint_path, img_size=256, channel_multiplier=2, device='cuda:0'):",
        "device_type", "replace", False,
        "def __init__(self, checkpoint_path, img_size=256, channel_multiplier=2, device='npu:0'):",
        "SG2Discriminator is not constructed on the training path; only breaks if someone uses it with the default"),
      C("self.device = 'cuda:0'", "device_type", "replace", True,
        "self.device = 'npu:0'",
        "device for the generators, CLIP loss models and sampled z"),
  ])

E("nada_train", "ZSSGAN/train.py", "explicit_replacement",
  "StyleGAN-NADA ZSSGAN/train.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C('device = "cuda"', "device_type", "replace", True,
        'device = "npu"',
        "module-level device used for fixed_z and mixing_noise"),
  ])

# ---------------------------------------------------------------- rosinality stylegan2-pytorch (base of all of the above)

E("sg2_distributed", "distributed.py", "explicit_replacement",
  "rosinality stylegan2-pytorch distributed.py (pickle-based all_gather, loss-dict reduction)",
  [
      C("tensor = torch.ByteTensor(storage).to('cuda')", "tensor_to_device", "replace", True,
        "tensor = torch.ByteTensor(storage).to('npu')",
        "collective buffers must live on the HCCL device; 'cuda' raises on an NPU host"),
      C("local_size = torch.IntTensor([tensor.numel()]).to('cuda')", "tensor_to_device", "replace", True,
        "local_size = torch.IntTensor([tensor.numel()]).to('npu')",
        "hard-coded 'cuda'"),
      C("size_list = [torch.IntTensor([0]).to('cuda') for _ in range(world_size)]", "tensor_to_device", "replace",
        True,
        "size_list = [torch.IntTensor([0]).to('npu') for _ in range(world_size)]",
        "hard-coded 'cuda'"),
      C("tensor_list.append(torch.ByteTensor(size=(max_size,)).to('cuda'))", "tensor_to_device", "replace", True,
        "tensor_list.append(torch.ByteTensor(size=(max_size,)).to('npu'))",
        "hard-coded 'cuda'"),
      C("padding = torch.ByteTensor(size=(max_size - local_size,)).to('cuda')", "tensor_to_device", "replace", True,
        "padding = torch.ByteTensor(size=(max_size - local_size,)).to('npu')",
        "hard-coded 'cuda'"),
  ])

E("sg2_train", "train.py", "explicit_replacement",
  "rosinality stylegan2-pytorch train.py (DDP via torch.distributed.launch, R1/path-length regularisation, ADA)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C('device = "cuda"', "device_type", "replace", True,
        'device = "npu"',
        "device for models, noise and regularisation tensors"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)",
        "per-rank device binding; torch.cuda raises without CUDA"),
      C('init_process_group(backend="nccl"', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl", init_method="env://")',
        "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("sg2_train_ddp_sh", "scripts/train_stylegan2_ffhq_ddp.sh", "explicit_replacement",
  "single-node 8-GPU launcher for rosinality train.py with NCCL tuning exports",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; " + SET_ENV + "; set -u",
        "CANN environment must be sourced; set_env.sh is known to fail under set -u, hence the set +u guard"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored on Ascend, but it selects all eight devices of the node anyway, so nothing changes"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL-only logging knob; the closest CANN equivalent is the global log level (mapping unconfirmed)"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL_SOCKET_IFNAME picks the host NIC used to reach the root rank; single-node job, so not needed to run"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "no HCCL counterpart; NPU-to-NPU traffic goes over the NPUs' own RoCE ports"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable; its default is already 1"),
  ])

# ---------------------------------------------------------------- InterFaceGAN / GANSpace

E("interfacegan_base_generator", "models/base_generator.py", "device_branch_or_abstraction",
  "InterFaceGAN models/base_generator.py (numpy-in/numpy-out generator wrapper, run_device/cpu_device)",
  [
      C("self.use_cuda = model_settings.USE_CUDA and torch.cuda.is_available()", "device_type", "replace", True,
        "self.use_cuda = model_settings.USE_CUDA and torch.npu.is_available()",
        "on an NPU host this is False and every generator silently runs on the CPU"),
      C("self.run_device = 'cuda' if self.use_cuda else 'cpu'", "device_type", "replace", True,
        "self.run_device = 'npu' if self.use_cuda else 'cpu'",
        "the single device string the whole wrapper hierarchy uses"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on NPU (CUDA never initialised): cached NPU memory is not released between sweeps"),
  ])

E("interfacegan_stylegan_generator", "models/stylegan_generator.py", "explicit_replacement",
  "InterFaceGAN models/stylegan_generator.py plus a fork-added batched boundary sweep",
  [
      C("boundary = torch.from_numpy(boundary.reshape(1, 1, -1)).type(torch.cuda.FloatTensor)", "torch_cuda_api",
        "replace", True,
        "boundary = torch.from_numpy(boundary.reshape(1, 1, -1)).to(self.run_device, torch.float32)",
        "legacy torch.cuda.FloatTensor type is unavailable without a CUDA build"),
      C("wps = torch.from_numpy(wp_codes).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "wps = torch.from_numpy(wp_codes).to(self.run_device, torch.float32)",
        "legacy torch.cuda.FloatTensor type"),
  ])

E("ganspace_decomposition", "decomposition.py", "device_branch_or_abstraction",
  "GANSpace decomposition.py (PCA/ICA of intermediate activations, VRAM-based batch sizing, lstsq regression)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "decomposition.py is run directly (and imported by interactive.py)"),
      C("torch.cuda.reset_max_memory_cached(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_max_memory_cached(device)",
        "get_max_batch_size runs whenever --batch_size is not given; torch.cuda memory APIs reject an npu device"),
      C("torch.cuda.reset_max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_max_memory_allocated(device)",
        "torch.cuda memory API"),
      C("total_mem = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", "replace", True,
        "total_mem = torch.npu.get_device_properties(device).total_memory",
        "torch.npu.get_device_properties also reports total_memory"),
      C("maxmem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        "maxmem = torch.npu.max_memory_allocated(device)",
        "torch.cuda memory API"),
      C("has_gpu = torch.cuda.is_available()", "device_type", "replace", True,
        "has_gpu = torch.npu.is_available()",
        "False on an NPU host, so the whole decomposition silently falls back to the CPU"),
      C("device = torch.device('cuda' if has_gpu else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if has_gpu else 'cpu')",
        "device string"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on NPU"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "only prints a misleading 'no GPU found' warning"),
  ])

# ---------------------------------------------------------------- PTI

E("pti_global_config", "configs/global_config.py", "explicit_replacement",
  "PTI (pivotal tuning) configs/global_config.py",
  [
      C("device = 'cuda:0'", "device_type", "replace", True,
        "device = 'npu:0'",
        "global device used by every coach, projector and loss"),
  ])

E("pti_run", "scripts/run_pti.py", "explicit_replacement",
  "PTI scripts/run_pti.py",
  [
      C("from torch.utils.data import DataLoader", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; first torch import"),
      C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", "removal", False, None,
        "CUDA-only enumeration order; no effect on Ascend"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = global_config.cuda_visible_devices", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = global_config.cuda_visible_devices",
        "configurable device mask is silently ignored on Ascend; whether setting it after import torch_npu still "
        "takes effect (lazy device init) is unconfirmed"),
  ])

E("pti_base_coach", "training/coaches/base_coach.py", "explicit_replacement",
  "PTI training/coaches/base_coach.py (e4e or projector pivots, LPIPS/L2 tuning losses)",
  [
      C("opts['checkpoint_path'] = paths_config.e4e", "device_type", "npu_only_addition", True,
        "opts['device'] = global_config.device",
        "the e4e checkpoint's opts carry device='cuda:0' from e4e training; pSp.__load_latent_avg moves latent_avg "
        "to opts.device, which fails on an NPU host unless overridden"),
  ])

E("inversion_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile of the kind shipped with inversion/editing repos (nvidia/cuda devel base, cu113 wheels, op prebuild)",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image; the container needs the CANN toolkit (and the host driver mounted) instead"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "custom_cuda_extension", "removal", False, None,
        "only read by nvcc extension builds"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "points at a CUDA install that does not exist in the Ascend image; harmless once nothing builds CUDA code"),
      C("ENV FORCE_CUDA=1", "custom_cuda_extension", "removal", False, None,
        "only read by CUDA extension setup scripts"),
      C("RUN pip install --no-cache-dir torch==1.10.2+cu113 torchvision==0.11.3+cu113 \\", "torch_cuda_api",
        "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
        "CUDA builds of an old torch with no matching torch_npu"),
      C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", True,
        "--index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; x86 needs the CPU torch wheels for torch_npu"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir " + TORCH_NPU_PIN,
        "install the torch-npu wheel matched to torch"),
      C('RUN cd /workspace && python -c "import models.stylegan2.op"', "custom_cuda_extension", "removal", False,
        None,
        "nvcc prebuild of the StyleGAN2 ops; pointless once the op files route NPU tensors to the reference "
        "path, but it breaks the image build if they are left unported"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read only by nvidia-container-runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (usually given "
        "at docker run time)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime only"),
  ])
