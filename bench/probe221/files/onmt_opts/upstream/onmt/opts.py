""" Implementation of all available options """
import configargparse

from onmt.constants import ModelTask
from onmt.transforms import AVAILABLE_TRANSFORMS


def config_opts(parser):
    group = parser.add_argument_group("Configuration")
    group.add(
        "-config",
        "--config",
        required=False,
        is_config_file_arg=True,
        help="Path of the main YAML config file.",
    )
    group.add(
        "-save_config",
        "--save_config",
        required=False,
        is_write_out_config_file_arg=True,
        help="Path where to save the config.",
    )


def _add_logging_opts(parser, is_train=True):
    group = parser.add_argument_group("Logging")
    group.add("--log_file", "-log_file", type=str, default="", help="Output logs to a file under this path.")
    group.add(
        "--log_file_level",
        "-log_file_level",
        type=str,
        default="0",
        choices=["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "50", "40", "30", "20", "10", "0"],
    )
    if is_train:
        group.add("--report_every", "-report_every", type=int, default=50, help="Print stats at this interval.")
        group.add("--exp_host", "-exp_host", type=str, default="", help="Send logs to this crayon server.")
        group.add("--exp", "-exp", type=str, default="", help="Name of the experiment for logging.")
        # Use Tensorboard for visualization during training
        group.add(
            "--tensorboard",
            "-tensorboard",
            action="store_true",
            help="Use tensorboard for visualization during training. "
            "Must have the library tensorboard >= 1.14.",
        )
        group.add(
            "--tensorboard_log_dir",
            "-tensorboard_log_dir",
            type=str,
            default="runs/onmt",
            help="Log directory for Tensorboard. This is also the name of the run.",
        )
    else:
        # Options only during inference
        group.add("--verbose", "-verbose", action="store_true", help="Print scores and predictions for each sentence")
        group.add("--attn_debug", "-attn_debug", action="store_true", help="Print best attn for each word")
        group.add("--report_time", "-report_time", action="store_true", help="Report some translation time metrics")


def _add_reproducibility_opts(parser):
    group = parser.add_argument_group("Reproducibility")
    group.add(
        "--seed",
        "-seed",
        type=int,
        default=-1,
        help="Set random seed used for better reproducibility between experiments.",
    )


def _add_train_general_opts(parser):
    """General options for training"""
    group = parser.add_argument_group("General")
    group.add("--data_type", "-data_type", default="text", help="Type of the source input. Options are [text].")

    group.add(
        "--save_model",
        "-save_model",
        default="model",
        help="Model filename (the model will be saved as <save_model>_N.pt where N is the number of steps",
    )
    group.add(
        "--save_checkpoint_steps",
        "-save_checkpoint_steps",
        type=int,
        default=5000,
        help="""Save a checkpoint every X steps""",
    )
    group.add("--keep_checkpoint", "-keep_checkpoint", type=int, default=-1, help="Keep X checkpoints (negative: keep all)")

    # GPU
    group.add(
        "--gpuid",
        "-gpuid",
        default=[],
        nargs="*",
        type=int,
        help="Deprecated see world_size and gpu_ranks.",
    )
    group.add("--gpu_ranks", "-gpu_ranks", default=[], nargs="*", type=int, help="list of ranks of each process.")
    group.add("--world_size", "-world_size", default=1, type=int, help="total number of distributed processes.")
    group.add(
        "--parallel_mode",
        "-parallel_mode",
        default="data_parallel",
        choices=["tensor_parallel", "data_parallel"],
        type=str,
        help="Distributed mode.",
    )
    group.add(
        "--gpu_backend",
        "-gpu_backend",
        default="nccl",
        type=str,
        help="Type of torch distributed backend",
    )
    group.add(
        "--gpu_verbose_level",
        "-gpu_verbose_level",
        default=0,
        type=int,
        help="Gives more info on each process per GPU.",
    )
    group.add(
        "--master_ip",
        "-master_ip",
        default="localhost",
        type=str,
        help="IP of master for torch.distributed training.",
    )
    group.add(
        "--master_port",
        "-master_port",
        default=10000,
        type=int,
        help="Port of master for torch.distributed training.",
    )
    group.add("--timeout", "-timeout", default=60, type=int, help="Timeout for one GOU to wait for the others.")

    _add_reproducibility_opts(parser)

    # Init options
    group = parser.add_argument_group("Initialization")
    group.add(
        "--param_init",
        "-param_init",
        type=float,
        default=0.0,
        help="Parameters are initialized over uniform distribution "
        "with support (-param_init, param_init). "
        "Use 0 to not use initialization",
    )
    group.add(
        "--param_init_glorot",
        "-param_init_glorot",
        action="store_true",
        help="Init parameters with xavier_uniform. Required for transformer.",
    )
    group.add(
        "--train_from",
        "-train_from",
        default="",
        type=str,
        help="If training from a checkpoint then this is the path to the pretrained model's state_dict.",
    )
    group.add(
        "--reset_optim",
        "-reset_optim",
        default="none",
        choices=["none", "all", "states", "keep_states"],
        help="Optimization resetter when train_from.",
    )

    # Optimization options
    group = parser.add_argument_group("Optimization- Type")
    group.add("--batch_size", "-batch_size", type=int, default=64, help="Maximum batch size for training")
    group.add(
        "--batch_type",
        "-batch_type",
        default="sents",
        choices=["sents", "tokens"],
        help="Batch grouping for batch_size. Standard is sents. Tokens will do dynamic batching",
    )
    group.add("--normalization", "-normalization", default="sents", choices=["sents", "tokens"], help="Normalization method of the gradient.")
    group.add("--accum_count", "-accum_count", type=int, nargs="+", default=[1], help="Accumulate gradient this many times.")
    group.add("--accum_steps", "-accum_steps", type=int, nargs="+", default=[0], help="Steps at which accum_count values change")
    group.add("--train_steps", "-train_steps", type=int, default=100000, help="Number of training steps")
    group.add(
        "--optim",
        "-optim",
        default="sgd",
        choices=["sgd", "adagrad", "adadelta", "adam", "sparseadam", "adafactor", "fusedadam"],
        help="Optimization method. fusedadam needs the apex CUDA extensions (GPU only).",
    )
    group.add("--max_grad_norm", "-max_grad_norm", type=float, default=5, help="If the norm of the gradient vector exceeds this, renormalize it to have the norm equal to max_grad_norm")
    group.add("--adam_beta1", "-adam_beta1", type=float, default=0.9, help="The beta1 parameter used by Adam.")
    group.add("--adam_beta2", "-adam_beta2", type=float, default=0.999, help="The beta2 parameter used by Adam.")
    group.add(
        "--loss_scale",
        "-loss_scale",
        type=float,
        default=0,
        help="For FP16 training, the static loss scale to use. If not set, the loss scale is dynamically computed.",
    )
    group.add(
        "--apex_opt_level",
        "-apex_opt_level",
        type=str,
        default="",
        choices=["", "O0", "O1", "O2", "O3"],
        help="For FP16 training, the opt_level to use. See https://nvidia.github.io/apex/amp.html#opt-levels.",
    )


def _add_dtype_opts(parser):
    group = parser.add_argument_group("Model- Common")
    group.add(
        "--model_dtype",
        "-model_dtype",
        default="fp32",
        choices=["fp32", "fp16"],
        help="Data type of the model.",
    )


def _add_decoding_opts(parser):
    group = parser.add_argument_group("Beam Search")
    group.add("--beam_size", "-beam_size", type=int, default=5, help="Beam size")
    group.add("--ratio", "-ratio", type=float, default=-0.0, help="Ratio based beam stop condition")
    group.add("--block_ngram_repeat", "-block_ngram_repeat", type=int, default=0, help="Block repetition of ngrams during decoding.")
    group.add("--n_best", "-n_best", type=int, default=1, help="If verbose is set, will output the n_best decoded sentences")


def translate_opts(parser):
    """Translation / inference options"""
    group = parser.add_argument_group("Model")
    group.add(
        "--model",
        "-model",
        dest="models",
        metavar="MODEL",
        nargs="+",
        type=str,
        default=[],
        required=True,
        help="Path to model .pt file(s). Multiple models can be specified, for ensemble decoding.",
    )
    group.add("--fp32", "-fp32", action="store_true", help="Force the model to be in FP32 because FP16 is very slow on GTX1080(ti).")
    group.add("--int8", "-int8", action="store_true", help="Enable dynamic 8-bit quantization (CPU only).")
    group.add("--avg_raw_probs", "-avg_raw_probs", action="store_true", help="If this is set, during ensembling scores from different models will be combined by averaging their raw probabilities and then taking the log.")

    group = parser.add_argument_group("Data")
    group.add("--src", "-src", required=True, help="Source sequence to decode (one line per sequence)")
    group.add("--tgt", "-tgt", help="True target sequence (optional)")
    group.add("--output", "-output", default="pred.txt", help="Path to output the predictions (each line will be the decoded sequence")
    group.add("--report_align", "-report_align", action="store_true", help="Report alignment for each translation.")
    group.add("--gold_align", "-gold_align", action="store_true", help="Report alignment between source and gold target.")
    group.add("--with_score", "-with_score", action="store_true", help="add a tab separated score to the translation.")

    _add_decoding_opts(parser)
    _add_logging_opts(parser, is_train=False)

    group = parser.add_argument_group("Efficiency")
    group.add("--batch_size", "-batch_size", type=int, default=30, help="Batch size")
    group.add("--batch_type", "-batch_type", default="sents", choices=["sents", "tokens"], help="Batch grouping for batch_size.")
    group.add("--gpu", "-gpu", type=int, default=-1, help="Device to run on")
    group.add("--world_size", "-world_size", default=1, type=int, help="total number of distributed processes.")
    group.add("--gpu_ranks", "-gpu_ranks", default=[], nargs="*", type=int, help="list of ranks of each process.")


def train_opts(parser):
    """All options used in train."""
    config_opts(parser)
    _add_dtype_opts(parser)
    _add_train_general_opts(parser)
    _add_logging_opts(parser, is_train=True)
    parser.add("--transforms", "-transforms", default=[], nargs="+", choices=AVAILABLE_TRANSFORMS.keys(), help="Default transform pipeline to apply to data.")
    parser.add("--model_task", "-model_task", default=ModelTask.SEQ2SEQ, choices=[ModelTask.SEQ2SEQ, ModelTask.LANGUAGE_MODEL])


class StoreLoggingLevelAction(configargparse.Action):
    """Convert string to logging level"""

    import logging

    LEVELS = {
        "CRITICAL": logging.CRITICAL,
        "ERROR": logging.ERROR,
        "WARNING": logging.WARNING,
        "INFO": logging.INFO,
        "DEBUG": logging.DEBUG,
        "NOTSET": logging.NOTSET,
    }

    def __init__(self, option_strings, dest, help=None, **kwargs):
        super(StoreLoggingLevelAction, self).__init__(option_strings, dest, help=help, **kwargs)

    def __call__(self, parser, namespace, value, option_string=None):
        # Get the key 'value' in the dict, or just use 'value'
        level = StoreLoggingLevelAction.LEVELS.get(value, value)
        setattr(namespace, self.dest, level)
