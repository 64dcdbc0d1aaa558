"""Labels for probe380 (CAD and B-rep generative modelling). One C(...) per upstream line a careful porter edits.

required = complete-port counterfactual: with every other labelled line already ported, would leaving this
line unchanged fail, compute something wrong, or silently do the wrong thing on an Ascend NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry point: torch_npu must be imported before torch.npu / Tensor.npu() exist "
               "(autoload only from torch_npu 2.5.1; this project pins an older torch)")
LOAD_NOTE = ("released/GPU-trained checkpoints hold CUDA tensors; torch.load without map_location fails "
             "on a host without CUDA")
AUTOCAST_NOTE = ("unported torch.cuda autocast only warns and disables itself on an NPU host: the step runs "
                 "in fp32, numerically fine but slower / more memory (performance only)")
SCALER_NOTE = ("torch.cuda.amp.GradScaler disables itself without CUDA; with the autocast ported to NPU fp16 "
               "the gradients would then be unscaled and underflow silently")
VISIBLE_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; the process would silently use "
                "NPU 0 instead of the requested device(s). Set before the first NPU call, so effective")
PIN_NOTE = ("without pin_memory_device the DataLoader only pins when torch.cuda.is_available(); on NPU it "
            "silently skips pinning (performance only, unconfirmed)")

# ---------------------------------------------------------------- DeepCAD (ChrisWu1997/DeepCAD)
E("deepcad_config_ae", "config/configAE.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD config/configAE.py (argparse -g/--gpu_ids -> CUDA_VISIBLE_DEVICES)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_ids)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_ids)', VISIBLE_NOTE),
])

E("deepcad_trainer_base", "trainer/base.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD trainer/base.py (BaseTrainer save/load checkpoint)", [
    C("=self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()",
      "model is moved to CPU for saving and back to the accelerator afterwards"),
    C("checkpoint = torch.load(load_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(load_path, map_location='cpu')",
      LOAD_NOTE + " (the optimizer state in DeepCAD's released ckpt is on cuda); "
      "Optimizer.load_state_dict moves the state to the parameters' device"),
])

E("deepcad_trainer_ae", "trainer/trainerAE.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD trainer/trainerAE.py (TrainerAE, .cuda() on net, loss and batches)", [
    C("self.net = CADTransformer(cfg).cuda()", "tensor_to_device", "replace", True,
      "self.net = CADTransformer(cfg).npu()", "model placement"),
    C("self.loss_func = CADLoss(self.cfg).cuda()", "tensor_to_device", "replace", True,
      "self.loss_func = CADLoss(self.cfg).npu()", "CADLoss registers a mask buffer, so .cuda() really moves a tensor"),
    C("commands = data['command'].cuda() # (N, S)", "tensor_to_device", "replace", True,
      "commands = data['command'].npu() # (N, S)", "batch to device"),
    C("args = data['args'].cuda()  # (N, S, N_ARGS)", "tensor_to_device", "replace", True,
      "args = data['args'].npu()  # (N, S, N_ARGS)", "batch to device"),
    C("=commands = data['command'].cuda()", "tensor_to_device", "replace", True,
      "commands = data['command'].npu()", "encode(): batch to device"),
    C("=args = data['args'].cuda()", "tensor_to_device", "replace", True,
      "args = data['args'].npu()", "encode(): batch to device"),
    C("mask = ~torch.tensor(CMD_ARGS_MASK).bool().cuda()[out_command.long()]", "tensor_to_device", "replace", True,
      "mask = ~torch.tensor(CMD_ARGS_MASK).bool().npu()[out_command.long()]",
      "mask must live on the same device as out_command"),
    C("commands, args = data['command'].cuda(), data['args'].cuda()", "tensor_to_device", "replace", True,
      "commands, args = data['command'].npu(), data['args'].npu()", "evaluate(): batch to device"),
])

E("deepcad_train", "train.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD train.py (entry point; no torch import of its own)", [
    C("from trainer import TrainerAE", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; the entry script has no `import torch`, so it goes next to the trainer import"),
])

E("deepcad_test", "test.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD test.py (rec / enc / dec modes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("batch_z = batch_z.cuda()", "tensor_to_device", "replace", True, "batch_z = batch_z.npu()",
      "latent codes to device before decoding"),
])

E("deepcad_model_ae", "model/autoencoder.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD model/autoencoder.py (CADTransformer; device-agnostic)", [])

E("deepcad_lgan", "lgan.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD lgan.py (latent WGAN-gp: config, agent, dataset in one file)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('self.device = torch.device("cuda:{}".format(args.gpu_ids) if torch.cuda.is_available() else "cpu")',
      "device_type", "replace", True,
      'self.device = torch.device("npu:{}".format(args.gpu_ids) if torch.npu.is_available() else "cpu")',
      "otherwise silently falls back to CPU while the .npu() lines put the nets on the NPU -> device mismatch"),
    C("self.netG = Generator(cfg.n_dim, cfg.h_dim, cfg.z_dim).cuda()", "tensor_to_device", "replace", True,
      "self.netG = Generator(cfg.n_dim, cfg.h_dim, cfg.z_dim).npu()", "model placement"),
    C("self.netD = Discriminator(cfg.h_dim, cfg.z_dim).cuda()", "tensor_to_device", "replace", True,
      "self.netD = Discriminator(cfg.h_dim, cfg.z_dim).npu()", "model placement"),
    C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()", "gradient penalty"),
    C("grad_outputs=torch.ones(disc_interpolates.size()).cuda(),", "tensor_to_device", "replace", True,
      "grad_outputs=torch.ones(disc_interpolates.size()).npu(),", "gradient penalty"),
    C("one = one.cuda()", "tensor_to_device", "replace", True, "one = one.npu()", "backward seed tensor"),
    C("mone = mone.cuda()", "tensor_to_device", "replace", True, "mone = mone.npu()", "backward seed tensor"),
    C("real_data = real_data.cuda()", "tensor_to_device", "replace", True, "real_data = real_data.npu()", "batch"),
    C("=noise = noise.cuda()", "tensor_to_device", "replace", True, "noise = noise.npu()", "critic noise"),
    C("noise = torch.randn(self.batch_size, self.n_dim).cuda()", "tensor_to_device", "replace", True,
      "noise = torch.randn(self.batch_size, self.n_dim).npu()", "generator noise"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu_ids)', "env_var", "removal", False, None,
      "set only after ConfigLGAN already picked 'cuda:<gpu_ids>' and queried the runtime; the device index "
      "already selects the card, and ASCEND_RT_VISIBLE_DEVICES=<id> together with 'npu:<id>' would even "
      "break for id>0 (re-indexing) - drop it rather than translate it"),
])

E("deepcad_pc2cad", "pc2cad.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD pc2cad.py (PointNet++ encoder to shape codes, module-level script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("net = PointNet2().cuda()", "tensor_to_device", "replace", True, "net = PointNet2().npu()", "model placement"),
    C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
      "net = net  # torch.nn.DataParallel is not supported on Ascend; single device (use DDP for multi-NPU)",
      "nn.DataParallel is unsupported on NPU (Ascend API list); reached whenever -g lists several devices"),
    C("self.criterion = nn.MSELoss().cuda()", "tensor_to_device", "replace", False,
      "self.criterion = nn.MSELoss().npu()",
      "MSELoss has no parameters or buffers, so .cuda() moves nothing and does not fail; consistency only"),
    C('points = data["points"].cuda()', "tensor_to_device", "replace", True, 'points = data["points"].npu()', "batch"),
    C('code = data["code"].cuda()', "tensor_to_device", "replace", True, 'code = data["code"].npu()', "batch"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_ids)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_ids)', VISIBLE_NOTE),
])

E("deepcad_pn2_setup", "pointnet2_ops_lib/setup.py", "kernel_rewrite",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops_lib/setup.py (CUDA ops DeepCAD's pc2cad depends on)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on an NPU host; the kernels are re-implemented in Ascend C and built with NpuExtension"),
    C('osp.join(_ext_src_root, "src", "*.cu")', "custom_cuda_extension", "replace", True,
      'osp.join(_ext_src_root, "npu", "*.cpp")',
      "the .cu kernels (FPS, ball query, group/gather, three_nn/interpolate) are replaced by Ascend C sources"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"]', "env_var", "removal", False, None, "inert without nvcc"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu / CANN include and lib paths"),
    C('"nvcc": ["-O3", "-Xfatbin", "-compress-all"],', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are meaningless for NpuExtension; unconfirmed whether the key is rejected or ignored"),
])

E("deepcad_pn2_utils", "pointnet2_ops_lib/pointnet2_ops/pointnet2_utils.py", "kernel_rewrite",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops/pointnet2_utils.py (_ext autograd Functions + JIT fallback)", [
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", "replace", False,
      'raise ImportError("pointnet2_ops._ext must be prebuilt with NpuExtension; JIT load() of .cu is not available on NPU")',
      "only the fallback path when the built extension is missing; cpp_extension.load is unsupported on A2/A3 "
      "and the .cu sources cannot compile. The _ext.* calls keep their names once the Ascend C ops are bound"),
])

E("deepcad_requirements", "requirements.txt", "explicit_replacement",
  "ChrisWu1997/DeepCAD requirements (pip side; pythonocc from conda)", [
    C("torch>=1.4.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10  # with torch==2.1.0 and CANN 8.0.0",
      "the NPU backend package; torch must be pinned to the matching x.y.z"),
    C("pointnet2_ops @ git+https://github.com/erikwijmans/Pointnet2_PyTorch.git", "custom_cuda_extension", "replace",
      True, "pointnet2_ops @ file:./pointnet2_ops_lib  # NPU port built with NpuExtension",
      "the upstream package builds CUDAExtension and fails to install without nvcc"),
])

E("deepcad_visualize", "cadlib/visualize.py", "explicit_replacement",
  "ChrisWu1997/DeepCAD cadlib/visualize.py (OpenCascade solid building, CPU only)", [])

# ---------------------------------------------------------------- SkexGen (samxuxiang/SkexGen)
E("skexgen_train", "train.py", "explicit_replacement",
  "samxuxiang/SkexGen train (sketch / extrude VQ branches; --device -> CUDA_VISIBLE_DEVICES + cuda:0)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("num_workers=6, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=6, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op while CUDA is uninitialised, so it does not fail; the NPU cache "
      "is simply not released after the codebook re-init pass (memory only)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.device', VISIBLE_NOTE),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "all .to(device) calls follow this global"),
])

E("skexgen_sample", "sample.py", "explicit_replacement",
  "samxuxiang/SkexGen sample (random generation from code selector + code extraction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")', "sample()"),
    C("sketch_dec.load_state_dict(torch.load(args.sketch_weight))", "tensor_to_device", "replace", True,
      "sketch_dec.load_state_dict(torch.load(args.sketch_weight, map_location=device))", LOAD_NOTE),
    C("ext_dec.load_state_dict(torch.load(args.ext_weight))", "tensor_to_device", "replace", True,
      "ext_dec.load_state_dict(torch.load(args.ext_weight, map_location=device))", LOAD_NOTE),
    C("sketch_enc.load_state_dict(torch.load(args.sketch_weight.replace('sketch_dec', 'sketch_enc')))",
      "tensor_to_device", "replace", True,
      "sketch_enc.load_state_dict(torch.load(args.sketch_weight.replace('sketch_dec', 'sketch_enc'), map_location=device))",
      LOAD_NOTE),
    C("ext_enc.load_state_dict(torch.load(args.ext_weight.replace('ext_dec', 'ext_enc')))",
      "tensor_to_device", "replace", True,
      "ext_enc.load_state_dict(torch.load(args.ext_weight.replace('ext_dec', 'ext_enc'), map_location=device))",
      LOAD_NOTE),
    C("code_dec.load_state_dict(torch.load(args.code_weight))", "tensor_to_device", "replace", True,
      "code_dec.load_state_dict(torch.load(args.code_weight, map_location=device))", LOAD_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "encode_codes(); its torch.load calls already use map_location='cpu'"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.device)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.device)', VISIBLE_NOTE),
])

E("skexgen_decoder", "model/decoder.py", "explicit_replacement",
  "samxuxiang/SkexGen model/decoder.py (autoregressive sketch / extrude decoders, nucleus sampling)", [
    C("nextp_seq = torch.LongTensor(next_pixels).view(len(next_pixels), 1).cuda()", "tensor_to_device", "replace",
      True, "nextp_seq = torch.LongTensor(next_pixels).view(len(next_pixels), 1).npu()",
      "sampled tokens are concatenated with device tensors"),
    C("nextxy_seq = torch.LongTensor(next_xys).unsqueeze(1).cuda()", "tensor_to_device", "replace", True,
      "nextxy_seq = torch.LongTensor(next_xys).unsqueeze(1).npu()", "same"),
    C("ext_seq = torch.zeros((n_samples, 0), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "ext_seq = torch.zeros((n_samples, 0), dtype=torch.long).npu()",
      "could also take latent_z.device; the following lines derive their device from ext_seq"),
])

E("skexgen_encoder", "model/encoder.py", "explicit_replacement",
  "samxuxiang/SkexGen model/encoder.py (EMA vector quantiser, sketch / extrude encoders; device-agnostic)", [])

E("skexgen_scripts", "scripts/train.sh", "explicit_replacement",
  "samxuxiang/SkexGen training commands (--device <idx> flags only)", [])

# ---------------------------------------------------------------- BrepGen (samxuxiang/BrepGen)
E("brepgen_ae", "ae.py", "explicit_replacement",
  "samxuxiang/BrepGen ae.py (surface / edge VAE entry; --gpu nargs -> CUDA_VISIBLE_DEVICES)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, args.gpu))', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(map(str, args.gpu))', VISIBLE_NOTE),
])

E("brepgen_trainer", "trainer.py", "explicit_replacement",
  "samxuxiang/BrepGen trainer.py (SurfVAE / SurfPos / SurfZ trainers: DataParallel, AMP, DDPM)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "ae.py / ldm.py reach torch only through `from trainer import *`, so the import goes here"),
    C("model.load_state_dict(torch.load(args.weight))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weight, map_location='cpu'))", LOAD_NOTE + " (--finetune)"),
    C("model = nn.DataParallel(model)  # distributed training", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU; single-device training (multi-NPU would need DDP + torchrun)"),
    C("self.model = model.to('cuda').train()", "device_type", "replace", True,
      "self.model = model.to('npu').train()", "model placement"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()", SCALER_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():", AUTOCAST_NOTE),
    C("=surf_uv = surf_uv.to('cuda').permute(0, 3, 1, 2)", "device_type", "replace", True,
      "surf_uv = surf_uv.to('npu').permute(0, 3, 1, 2)", "batch"),
    C("permute(0, 3, 1, 2)  # (N, H, W, 3)", "device_type", "replace", True,
      "surf_uv = surf_uv.to('npu').permute(0, 3, 1, 2)  # (N, H, W, 3) -> (N, 3, H, W)", "validation batch"),
    C("torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'epoch_'", "distributed_framework",
      "replace", True,
      "torch.save(self.model.state_dict(), os.path.join(self.save_dir, 'epoch_' + str(self.epoch) + '.pt'))",
      "follows from dropping DataParallel: .module no longer exists"),
    C("self.device = torch.device('cuda:0')", "device_type", "replace", True,
      "self.device = torch.device('npu:0')", "SurfPosTrainer device"),
    C("model = nn.DataParallel(model)  # multi-gpu", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU"),
    C("self.scaler = torch.cuda.amp.GradScaler(init_scale=2. ** 14)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(init_scale=2. ** 14)", SCALER_NOTE),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16):", AUTOCAST_NOTE),
    C("torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'surfpos_epoch_'",
      "distributed_framework", "replace", True,
      "torch.save(self.model.state_dict(), os.path.join(self.save_dir, 'surfpos_epoch_' + str(self.epoch) + '.pt'))",
      "follows from dropping DataParallel"),
    C("=self.device = 'cuda'", "device_type", "replace", True, "self.device = 'npu'", "SurfZTrainer device"),
    C("model = nn.DataParallel(model)  # data parallel over all visible GPUs", "distributed_framework", "removal",
      True, None, "nn.DataParallel is unsupported on NPU"),
    C("surf_vae.load_state_dict(torch.load(args.surfvae), strict=False)", "tensor_to_device", "replace", True,
      "surf_vae.load_state_dict(torch.load(args.surfvae, map_location='cpu'), strict=False)",
      LOAD_NOTE + " (the VAE was saved from a GPU DataParallel .module)"),
    C("surf_vae = nn.DataParallel(surf_vae)  # distributed inference", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU; the frozen VAE is called directly"),
    C("self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.grad_scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)", SCALER_NOTE),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):", AUTOCAST_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op rather than an error while CUDA is uninitialised; memory housekeeping only"),
    C("torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'surfz_epoch_'",
      "distributed_framework", "replace", True,
      "torch.save(self.model.state_dict(), os.path.join(self.save_dir, 'surfz_epoch_' + str(self.epoch) + '.pt'))",
      "follows from dropping DataParallel"),
])

E("brepgen_network", "network.py", "explicit_replacement",
  "samxuxiang/BrepGen network.py (diffusers AutoencoderKL variants, SurfPos/SurfZ transformers; device-agnostic)", [])

E("brepgen_sample", "sample.py", "explicit_replacement",
  "samxuxiang/BrepGen sample.py (PNDM/DDPM sampling of faces, B-rep assembly)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "would silently pick CPU while the ported .npu() calls use the NPU -> device mismatch"),
    C("surfPos_model.load_state_dict(torch.load(eval_args['surfpos_weight']))", "tensor_to_device", "replace", True,
      "surfPos_model.load_state_dict(torch.load(eval_args['surfpos_weight'], map_location=device))", LOAD_NOTE),
    C("surfZ_model.load_state_dict(torch.load(eval_args['surfz_weight']))", "tensor_to_device", "replace", True,
      "surfZ_model.load_state_dict(torch.load(eval_args['surfz_weight'], map_location=device))", LOAD_NOTE),
    C("edgePos_model.load_state_dict(torch.load(eval_args['edgepos_weight']))", "tensor_to_device", "replace", True,
      "edgePos_model.load_state_dict(torch.load(eval_args['edgepos_weight'], map_location=device))", LOAD_NOTE),
    C("edgeZ_model.load_state_dict(torch.load(eval_args['edgez_weight']))", "tensor_to_device", "replace", True,
      "edgeZ_model.load_state_dict(torch.load(eval_args['edgez_weight'], map_location=device))", LOAD_NOTE),
    C("surf_vae.load_state_dict(torch.load(eval_args['surfvae_weight']), strict=False)", "tensor_to_device",
      "replace", True,
      "surf_vae.load_state_dict(torch.load(eval_args['surfvae_weight'], map_location=device), strict=False)",
      LOAD_NOTE),
    C("edge_vae.load_state_dict(torch.load(eval_args['edgevae_weight']), strict=False)", "tensor_to_device",
      "replace", True,
      "edge_vae.load_state_dict(torch.load(eval_args['edgevae_weight'], map_location=device), strict=False)",
      LOAD_NOTE),
    C("[text2int['uncond']] * batch_size).cuda().reshape(-1, 1)", "tensor_to_device", "replace", True,
      "[text2int['uncond']] * batch_size).npu().reshape(-1, 1)", "class labels for classifier-free guidance"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "inference autocast silently disabled -> fp32 sampling: correct, slower (performance only)"),
    C("=timesteps = t.reshape(-1).cuda()", "tensor_to_device", "replace", True, "timesteps = t.reshape(-1).npu()",
      "PNDM timestep"),
    C("timesteps = t.reshape(-1).cuda()  # (1,)", "tensor_to_device", "replace", True,
      "timesteps = t.reshape(-1).npu()  # (1,)", "DDPM timestep"),
    C("surfPos = torch.stack(surfPos_deduplicate).cuda()", "tensor_to_device", "replace", True,
      "surfPos = torch.stack(surfPos_deduplicate).npu()", "deduplicated boxes back to device"),
    C("surfMask = torch.vstack(surfMask_deduplicate).cuda()", "tensor_to_device", "replace", True,
      "surfMask = torch.vstack(surfMask_deduplicate).npu()", "padding mask back to device"),
])

E("brepgen_utils", "utils.py", "explicit_replacement",
  "samxuxiang/BrepGen utils.py (OpenCascade B-rep fitting and sewing, numpy; no device code)", [])

E("brepgen_pc_metric", "eval/pc_metric.py", "explicit_replacement",
  "samxuxiang/BrepGen eval/pc_metric.py (PointFlow-style COV/MMD/1-NNA/JSD)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_ids)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_ids)', VISIBLE_NOTE),
    C("rand_sample_pcs = torch.tensor(rand_sample_pcs).cuda().float()", "tensor_to_device", "replace", True,
      "rand_sample_pcs = torch.tensor(rand_sample_pcs).npu().float()", "metric tensors"),
    C("rand_ref_pcs = torch.tensor(rand_ref_pcs).cuda().float()", "tensor_to_device", "replace", True,
      "rand_ref_pcs = torch.tensor(rand_ref_pcs).npu().float()", "metric tensors"),
])

E("brepgen_scripts", "scripts/eval_deepcad.sh", "explicit_replacement",
  "samxuxiang/BrepGen sampling + evaluation shell steps", [
    C("mkdir -p ${SAVE_DIR}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the login shell / container already sources it"),
    C("CUDA_VISIBLE_DEVICES=0 timeout 6h python sample.py --mode deepcad", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 timeout 6h python sample.py --mode deepcad",
      "selects device 0, which the NPU port uses by default anyway"),
])

# ---------------------------------------------------------------- HNC-CAD (samxuxiang/hnc-cad)
E("hnc_train_vq", "gen/train_vq.py", "explicit_replacement",
  "samxuxiang/hnc-cad codebook training (solid/profile/loop VQ), here with torchrun DDP + AMP", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding"),
    C("dist.init_process_group(backend='nccl', init_method='env://',", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://',", "NCCL does not exist on Ascend"),
    C("return torch.device(f'cuda:{args.local_rank}')", "device_type", "replace", True,
      "return torch.device(f'npu:{args.local_rank}')", "device used for every batch .to()"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("encoder = encoder.cuda(args.local_rank)", "tensor_to_device", "replace", True,
      "encoder = encoder.npu(args.local_rank)", "model placement before DDP"),
    C("decoder = decoder.cuda(args.local_rank)", "tensor_to_device", "replace", True,
      "decoder = decoder.npu(args.local_rank)", "model placement before DDP"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)", SCALER_NOTE + " (--fp16 in the launcher)"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.fp16, dtype=torch.float16):", AUTOCAST_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on a host without it"),
    C("peak mem {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(f'epoch {epoch}: {elapsed:.1f}s, peak mem {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GB')",
      "log only; CUDA memory stats return empty (0) when CUDA was never initialised rather than raising "
      "(unconfirmed)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the stats getters this resolves a device and calls into the CUDA runtime binding -> error"),
])

E("hnc_utils", "gen/utils.py", "explicit_replacement",
  "samxuxiang/hnc-cad gen/utils.py (seeding, loss, NVML / nvidia-smi memory logging, arc geometry)", [
    C("import pynvml", "torch_cuda_api", "removal", False, None,
      "the import itself works if nvidia-ml-py is installed; drop it with the NVML calls below"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "queued lazily, so no error; torch.manual_seed already seeds the PrivateUse1 (NPU) generator in torch>=2.1 "
      "(unconfirmed for older torch)"),
    C("['nvidia-smi', '--query-gpu=index,name,memory.total,memory.used', '--format=csv,noheader,nounits'],",
      "torch_cuda_api", "replace", False, "['npu-smi', 'info'],",
      "get_gpu_info() is not called by the training or sampling entry points; npu-smi output needs a new parser"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML is absent on an Ascend host: nvmlInit raises NVMLError (called every epoch by train_vq on rank 0)"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(local_rank)", "driver-level memory view via torch_npu"),
    C("info = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True, "used = total - free",
      "replaces the NVML memory struct"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(handle)", "torch_cuda_api", "replace", True,
      "util = torch.npu.utilization(local_rank)", "torch.npu.utilization is in the torch_npu.npu API"),
    C("writer.add_scalar('GPU/mem_used_GB', info.used / 2 ** 30, step)", "torch_cuda_api", "replace", True,
      "writer.add_scalar('GPU/mem_used_GB', used / 2 ** 30, step)", "follows the NVML replacement"),
    C("writer.add_scalar('GPU/util', util.gpu, step)", "torch_cuda_api", "replace", True,
      "writer.add_scalar('GPU/util', util, step)", "follows the NVML replacement"),
])

E("hnc_network", "gen/network.py", "explicit_replacement",
  "samxuxiang/hnc-cad gen/network.py (VQ codebooks, code-tree generator; device-agnostic)", [])

E("hnc_sample", "gen/sample.py", "explicit_replacement",
  "samxuxiang/hnc-cad unconditional code-tree sampling", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('device = torch.device(f"cuda:{args.device}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.device}")', "load_weights() already maps to this device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "would reject an npu device / initialise CUDA"),
    C("solid_codebook = torch.load(os.path.join(args.vq_dir, 'solid_codebook.pt'))", "tensor_to_device", "replace",
      True, "solid_codebook = torch.load(os.path.join(args.vq_dir, 'solid_codebook.pt'), map_location='cpu')",
      LOAD_NOTE + "; kept on CPU because it is indexed with the CPU code indices from split_tree"),
    C("profile_codebook = torch.load(os.path.join(args.vq_dir, 'profile_codebook.pt'))", "tensor_to_device",
      "replace", True,
      "profile_codebook = torch.load(os.path.join(args.vq_dir, 'profile_codebook.pt'), map_location='cpu')",
      LOAD_NOTE),
    C("loop_codebook = torch.load(os.path.join(args.vq_dir, 'loop_codebook.pt'))", "tensor_to_device", "replace",
      True, "loop_codebook = torch.load(os.path.join(args.vq_dir, 'loop_codebook.pt'), map_location='cpu')",
      LOAD_NOTE),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "timing events"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "timing events"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("hnc_scripts", "scripts/train_vq.sh", "explicit_replacement",
  "samxuxiang/hnc-cad training launcher (torchrun, 4 GPUs, NCCL env)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell / container already sources it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ranks bind NPUs 0-3 by LOCAL_RANK anyway, so leaving it ignored changes nothing on the default host"),
])

# ---------------------------------------------------------------- CAD-Recode (filapro/cad-recode)
E("cadrecode_model", "cad_recode/model.py", "explicit_replacement",
  "filapro/cad-recode CADRecode(Qwen2ForCausalLM) with Fourier point encoder (device-agnostic)", [])

E("cadrecode_infer", "inference.py", "explicit_replacement",
  "filapro/cad-recode demo inference (HF from_pretrained with flash_attention_2, pytorch3d FPS, CadQuery exec)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "would silently run the 1.5B bf16 model on CPU"),
    C("attn_implementation='flash_attention_2').eval().to(device)", "attention_kernel", "replace", True,
      "attn_implementation='sdpa').eval().to(device)",
      "flash-attn cannot be installed on NPU and transformers refuses flash_attention_2 without it; "
      "SDPA dispatches to the NPU fused attention"),
    C("{torch.cuda.get_device_name(0)}", "torch_cuda_api", "replace", True,
      "print(f'Loaded {args.checkpoint} on {torch.npu.get_device_name(0)}')",
      "get_device_name initialises CUDA and raises"),
    C("peak GPU memory: {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(f'peak NPU memory: {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GB')",
      "log only; reports 0 instead of raising when CUDA is uninitialised (unconfirmed)"),
])

E("cadrecode_train", "train.py", "explicit_replacement",
  "filapro/cad-recode training with HF Trainer (bf16, tf32, DDP via torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("=tf32=True,", "device_capability_check", "replace", False, "tf32=False,",
      "TrainingArguments checks is_torch_tf32_available() (a CUDA Ampere check) and can raise; transfer_to_npu "
      "patches exactly that helper. Behaviour depends on the transformers version (unconfirmed)"),
])

E("cadrecode_config", "configs/train.yaml", "explicit_replacement",
  "filapro/cad-recode training recipe YAML", [
    C("attn_implementation: flash_attention_2", "attention_kernel", "replace", True, "attn_implementation: sdpa",
      "consumed by from_pretrained in train.py; flash_attention_2 needs the CUDA-only flash-attn package"),
    C("ddp_backend: nccl", "dist_backend", "replace", True, "ddp_backend: hccl",
      "passed to TrainingArguments(ddp_backend=...); nccl is unavailable on Ascend"),
])

E("cadrecode_requirements", "requirements.txt", "explicit_replacement",
  "filapro/cad-recode requirements", [
    C("torch==2.5.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.5.1",
      "torch_npu 2.5.1 pairs with torch 2.5.1 (CANN 8.1.RC1)"),
    C("flash-attn==2.7.2.post1", "attention_kernel", "removal", True, None,
      "flash-attn builds CUDA kernels and cannot be installed on an NPU host; SDPA is used instead"),
])

E("cadrecode_docker", "Dockerfile", "explicit_replacement",
  "filapro/cad-recode style CUDA devel image (flash-attn + pytorch3d from source)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CANN base image instead of the CUDA toolkit image (the kind list has no base-image kind)"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0"', "env_var", "removal", False, None, "inert without nvcc"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", True, None,
      "forces pytorch3d's setup.py to build CUDA kernels, which fails without nvcc; unset it builds CPU ops"),
    C("RUN pip install --no-cache-dir torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.5.1 torch-npu==2.5.1 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CPU torch wheel plus torch_npu instead of the cu121 wheel"),
])
