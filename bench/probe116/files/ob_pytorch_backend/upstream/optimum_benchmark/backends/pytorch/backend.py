import gc
import os
from logging import getLogger
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any, Callable, Dict, List

import torch
from datasets import Dataset
from transformers import Trainer, TrainingArguments
from transformers.utils.logging import set_verbosity_error

from ...import_utils import is_deepspeed_available, is_peft_available
from ..base import Backend
from .config import PyTorchConfig
from .utils import DEFAULT_TRAINING_ARGS, randomize_weights

if TYPE_CHECKING:
    from transformers import TrainerCallback, TrainerState
    from transformers.utils import ModelOutput

if is_peft_available():
    from peft import get_peft_model

if is_deepspeed_available():
    from deepspeed import init_inference


# bachend logger
LOGGER = getLogger("pytorch")

# disable other loggers
set_verbosity_error()


class PyTorchBackend(Backend[PyTorchConfig]):
    NAME: str = "pytorch"

    def __init__(self, model: str, task: str, device: str, hub_kwargs: Dict[str, Any]):
        super().__init__(model, task, device, hub_kwargs)
        self.device = torch.device(device)

        LOGGER.info(
            f"\t+ Infered AutoModel class {self.automodel_class.__name__} "
            f"for task {self.task} and model_type {self.model_type}"
        )

    def configure(self, config: PyTorchConfig) -> None:
        super().configure(config)

        # for now we rely on this env variable to know if we're in a distributed setting
        if os.environ.get("LOCAL_WORLD_SIZE", None) is not None:
            LOGGER.info(f"\t+ Detected local world size: {os.environ['LOCAL_WORLD_SIZE']}")
            local_rank = int(os.environ["LOCAL_RANK"])
            LOGGER.info(f"\t+ Detected local rank: {local_rank}")
            available_devices = list(map(int, os.environ["CUDA_VISIBLE_DEVICES"].split(",")))
            LOGGER.info(f"\t+ Detected available devices: {available_devices}")
            default_device_index = available_devices[local_rank]
            LOGGER.info(f"\t+ Setting default device index to {default_device_index}")
            torch.cuda.set_device(torch.device("cuda", default_device_index))

        # Gradients options
        if self.config.disable_grad:
            LOGGER.info("\t+ Disabling gradients")
            # everything that comes after this will have its gradients disabled
            torch.set_grad_enabled(False)

        # Threading options
        if self.config.inter_op_num_threads is not None:
            LOGGER.info(f"\t+ Setting pytorch inter_op_num_threads({self.config.inter_op_num_threads}))")
            torch.set_num_threads(self.config.inter_op_num_threads)
        if self.config.intra_op_num_threads is not None:
            LOGGER.info(f"\t+ Setting pytorch intra_op_num_threads({self.config.intra_op_num_threads}))")
            torch.set_num_interop_threads(self.config.intra_op_num_threads)

        # Mixed precision
        if self.config.amp_dtype is not None:
            LOGGER.info(f"\t+ Setting mixed precision dtype to {self.config.amp_dtype}")
            self.amp_dtype = getattr(torch, self.config.amp_dtype)
        else:
            self.amp_dtype = None

        # SDPA kernel selection (only meaningful for models that go through F.scaled_dot_product_attention)
        if self.config.sdp_backend is not None:
            LOGGER.info(f"\t+ Restricting scaled_dot_product_attention to the {self.config.sdp_backend} kernel")
            torch.backends.cuda.enable_flash_sdp(self.config.sdp_backend == "flash")
            torch.backends.cuda.enable_mem_efficient_sdp(self.config.sdp_backend == "mem_efficient")
            torch.backends.cuda.enable_math_sdp(self.config.sdp_backend == "math")

        # Load model
        self.load_model_from_pretrained()

        # Eval mode
        if self.config.eval_mode:
            LOGGER.info("\t+ Turning on model's eval mode")
            self.pretrained_model.eval()

        # BetterTransformer
        if self.config.to_bettertransformer:
            LOGGER.info("\t+ Using optimum.bettertransformer")
            from optimum.bettertransformer import BetterTransformer

            self.pretrained_model = BetterTransformer.transform(
                self.pretrained_model,
                keep_original_model=False,
            )

        # Compile model
        if self.config.torch_compile:
            LOGGER.info("\t+ Using torch.compile on forward pass")
            self.pretrained_model.forward = torch.compile(
                self.pretrained_model.forward,
                **self.config.torch_compile_config,
            )

        # DeepSpeed
        if self.config.deepspeed_inference:
            LOGGER.info("\t+ Using DeepSpeed inference")
            self.pretrained_model = init_inference(
                self.pretrained_model,
                config=self.config.deepspeed_inference_config,
            )

        # Peft
        if self.config.peft_strategy is not None:
            LOGGER.info("\t+ Applying PEFT")
            from peft import PEFT_TYPE_TO_CONFIG_MAPPING

            peft_config = PEFT_TYPE_TO_CONFIG_MAPPING[self.config.peft_strategy](**self.config.peft_config)
            self.pretrained_model = get_peft_model(self.pretrained_model, peft_config=peft_config)

    def load_model_from_pretrained(self) -> None:
        # iniline quantization or quantization config modification
        if self.config.quantization_scheme == "gptq":
            LOGGER.info("\t+ Processing GPTQ config")
            from transformers import GPTQConfig

            self.quantization_config = GPTQConfig(**self.config.quantization_config)
        elif self.config.quantization_scheme == "bnb":
            LOGGER.info("\t+ Processing BitsAndBytesConfig")
            from transformers import BitsAndBytesConfig

            self.quantization_config = self.config.quantization_config.copy()
            if self.quantization_config.get("bnb_4bit_compute_dtype", None) is not None:
                self.quantization_config["bnb_4bit_compute_dtype"] = getattr(
                    torch, self.quantization_config["bnb_4bit_compute_dtype"]
                )
            self.quantization_config = BitsAndBytesConfig(**self.quantization_config)
        else:
            self.quantization_config = None

        if self.config.torch_dtype is not None:
            if hasattr(torch, self.config.torch_dtype):
                self.torch_dtype = getattr(torch, self.config.torch_dtype)
            else:
                self.torch_dtype = self.config.torch_dtype
        else:
            self.torch_dtype = None

        if self.config.no_weights:
            LOGGER.info("\t+ Loading model with no weights")
            self.load_model_with_no_weights()
        elif self.config.device_map is not None:
            LOGGER.info(f"\t+ Loading model with device_map: {self.config.device_map}")
            self.pretrained_model = self.automodel_class.from_pretrained(
                pretrained_model_name_or_path=self.model,
                device_map=self.config.device_map,
                torch_dtype=self.torch_dtype,
                quantization_config=self.quantization_config,
                **self.hub_kwargs,
            )
        else:
            LOGGER.info(f"\t+ Loading model directly on device: {self.device}")
            with self.device:
                self.pretrained_model = self.automodel_class.from_pretrained(
                    pretrained_model_name_or_path=self.model,
                    torch_dtype=self.torch_dtype,
                    quantization_config=self.quantization_config,
                    **self.hub_kwargs,
                )

    def load_model_with_no_weights(self) -> None:
        self.tmpdir = TemporaryDirectory()

        LOGGER.info("\t+ Creating no weights model directory")
        no_weights_model_path = os.path.join(self.tmpdir.name, "no_weights")
        os.makedirs(no_weights_model_path, exist_ok=True)

        LOGGER.info("\t+ Saving pretrained config")
        self.pretrained_config.save_pretrained(save_directory=no_weights_model_path)

        LOGGER.info("\t+ Loading no weights model")
        with torch.device("meta"):
            self.pretrained_model = self.automodel_class.from_config(self.pretrained_config)
        self.pretrained_model.to_empty(device=self.device)
        randomize_weights(self.pretrained_model)

    def prepare_input(self, input: Dict[str, Any]) -> Dict[str, Any]:
        input = super().prepare_input(input)

        # move to device
        for key, value in input.items():
            input[key] = value.to(self.device)

        return input

    @torch.inference_mode()
    def forward(self, input: Dict[str, Any], kwargs: Dict[str, Any]) -> "ModelOutput":
        with torch.autocast(device_type=self.device.type, dtype=self.amp_dtype, enabled=self.config.amp_autocast):
            return self.pretrained_model(**input, **kwargs)

    @torch.inference_mode()
    def generate(self, input: Dict[str, Any], kwargs: Dict[str, Any]) -> "ModelOutput":
        with torch.autocast(device_type=self.device.type, dtype=self.amp_dtype, enabled=self.config.amp_autocast):
            return self.pretrained_model.generate(**input, **kwargs)

    def train(
        self,
        training_dataset: Dataset,
        training_arguments: Dict[str, Any],
        training_callbacks: List["TrainerCallback"],
        training_data_collator: Callable,
    ) -> "TrainerState":
        LOGGER.info("\t+ Setting dataset format to `torch`.")
        training_dataset.set_format(type="torch", columns=list(training_dataset.features.keys()))

        LOGGER.info("\t+ Wrapping training arguments with transformers.TrainingArguments")
        training_arguments = TrainingArguments(**{**DEFAULT_TRAINING_ARGS, **training_arguments})

        LOGGER.info("\t+ Wrapping model with transformers.Trainer")
        trainer = Trainer(
            model=self.pretrained_model,
            args=training_arguments,
            callbacks=training_callbacks,
            train_dataset=training_dataset,
            data_collator=training_data_collator,
        )

        LOGGER.info("\t+ Starting training")
        trainer.train()
        LOGGER.info("\t+ Training finished successfully")

        return trainer.state

    def seed(self) -> None:
        super().seed()

        torch.manual_seed(self.config.seed)

        if self.device.type == "cuda":
            torch.cuda.manual_seed_all(self.config.seed)

    def clean(self) -> None:
        super().clean()

        if hasattr(self, "tmpdir"):
            LOGGER.info("\t+ Cleaning temporary directory")
            self.tmpdir.cleanup()

        gc.collect()

        if self.device.type == "cuda":
            torch.cuda.empty_cache()
